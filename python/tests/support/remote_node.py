"""One node of a fleet, run as its own process by the remote cache tests.

    python remote_node.py WEIGHTS CALLS_LOG [open|prepare]

Prepares the features + bias engine with the environment it was given (XDG_CACHE_HOME: the
node's own cache; TENSORACLE_REMOTE and AWS_*: the shared one). Each graph call appends a line
to CALLS_LOG. With NODE_BUILD_MARKER set, the graph writes that file and then sleeps
NODE_BUILD_SLEEP seconds (a long build to kill). Prints one JSON line: built, path, elapsed
seconds and the RemoteCacheWarnings raised.
"""

from __future__ import annotations

import json
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from engine_helpers import DECLARATION, IO, make_graph

import tensoracle


def main() -> None:
    weights, calls_log = Path(sys.argv[1]), Path(sys.argv[2])
    inner = make_graph(weights)

    def graph(network: Any) -> None:
        with calls_log.open("a") as log:
            log.write(f"{os.getpid()} {time.time()}\n")
        marker = os.environ.get("NODE_BUILD_MARKER")
        if marker:
            Path(marker).write_text(str(os.getpid()))
            time.sleep(float(os.environ.get("NODE_BUILD_SLEEP", "60")))
        inner(network)

    started = time.monotonic()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        prepared = tensoracle.prepare_engine(
            graph, DECLARATION, name="fleet", graph_version="1", weights=[weights], io=IO
        )
    print(
        json.dumps(
            {
                "built": prepared.built,
                "path": str(prepared.path),
                "elapsed": time.monotonic() - started,
                "warnings": [
                    str(item.message)
                    for item in caught
                    if issubclass(item.category, tensoracle.RemoteCacheWarning)
                ],
            }
        )
    )


if __name__ == "__main__":
    main()
