"""The limit on the size of one engine's identity conditions, checked before the store sees them."""

from __future__ import annotations

import pytest

from tensoracle.cache import identity


def _conditions(weights: int) -> dict[str, object]:
    return {"name": "net", "weights": ["ab" * 32] * weights, "plugins": ["cd" * 32]}


def test_conditions_up_to_the_limit_pass():
    conditions = _conditions(10)
    identity.check_conditions_size(identity.to_json(conditions), conditions)
    # exactly at the limit: counted in UTF-8 bytes, not characters
    text = "é" * (identity.MAX_CONDITIONS_BYTES // 2)
    identity.check_conditions_size(text, conditions)


def test_conditions_beyond_the_limit_name_their_size_and_largest_member():
    conditions = _conditions(identity.MAX_CONDITIONS_BYTES // 64)
    text = identity.to_json(conditions)
    with pytest.raises(ValueError, match="identity conditions take") as raised:
        identity.check_conditions_size(text, conditions)
    message = str(raised.value)
    assert f"{len(text.encode())} bytes as JSON" in message
    assert f"limit of {identity.MAX_CONDITIONS_BYTES} bytes" in message
    assert message.endswith("the largest is 'weights'")
    with pytest.raises(ValueError, match="beyond the limit"):
        identity.check_conditions_size("é" * (identity.MAX_CONDITIONS_BYTES // 2 + 1), conditions)
