"""The installed package's metadata: a long description that points users at pages that exist,
and the project's addresses."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
DOCS_LINK = re.compile(r"https://github\.com/sync-dev-org/tensoracle/blob/main/(docs/[\w.-]+\.md)")


def test_the_long_description_is_the_package_readme_and_its_links_name_existing_pages():
    description = metadata.metadata("tensoracle").get_payload()  # type: ignore[attr-defined]
    assert description.strip() == (REPOSITORY / "python" / "README.md").read_text().strip()
    linked = DOCS_LINK.findall(description)
    assert {"docs/install.md", "docs/support.md", "docs/deploy.md"} <= set(linked)
    missing = [page for page in linked if not (REPOSITORY / page).is_file()]
    assert missing == []


def test_the_project_addresses_are_recorded():
    urls = dict(
        entry.split(", ", 1) for entry in metadata.metadata("tensoracle").get_all("Project-URL")
    )
    assert set(urls) == {"Homepage", "Documentation", "Source", "Issues"}
    assert all(url.startswith("https://") for url in urls.values())
