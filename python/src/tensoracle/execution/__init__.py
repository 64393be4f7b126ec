"""Running an engine: the execution unit (``unit``: ``EngineExecution``), the IO table it is
checked against (``io_table``) and the dtypes of its tensors (``dtypes``)."""

from tensoracle.execution.unit import EngineExecution

__all__ = ["EngineExecution"]
