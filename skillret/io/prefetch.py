"""Read ahead on another thread (pyarrow and numpy release the GIL), a few items at most."""

from __future__ import annotations

import contextvars
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Generic, Iterable, TypeVar

T = TypeVar("T")
_DONE = object()


class prefetch(Generic[T]):  # noqa: N801 - used like a function: for x in prefetch(items)
    """Iterate `items` on a thread, `size` items read ahead waiting and one more being read;
    its exceptions reach the consumer. `close()` stops it and waits for the item being read."""

    def __init__(self, items: Iterable[T], size: int = 2):
        self._items = iter(items)
        # The caller's context, so the limits in force apply on the reader's thread too.
        self._context = contextvars.copy_context()
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="skillret-prefetch")
        self._ahead = deque(self._read() for _ in range(size + 1))

    def _read(self):
        return self._pool.submit(self._context.run, next, self._items, _DONE)

    def __iter__(self) -> "prefetch[T]":
        return self

    def __next__(self) -> T:
        if not self._ahead:
            raise StopIteration
        try:
            item = self._ahead.popleft().result()
        except BaseException:
            self.close()
            raise
        if item is _DONE:
            self.close()
            raise StopIteration
        self._ahead.append(self._read())
        return item

    def close(self) -> None:
        self._ahead.clear()
        self._pool.shutdown(cancel_futures=True)
