"""Read ahead on another thread: parsing the next block overlaps scoring the current one.

pyarrow and numpy release the GIL in their kernels, so a reader thread feeding a small queue
keeps a second core busy. The queue is bounded, which bounds the memory held ahead.
"""

from __future__ import annotations

import contextvars
import queue
import threading
from typing import Generic, Iterable, TypeVar

T = TypeVar("T")
_DONE = object()


class _Failed:
    def __init__(self, error: BaseException):
        self.error = error


class prefetch(Generic[T]):  # noqa: N801 - used like a function: for x in prefetch(items)
    """Iterate `items` on a background thread that starts at once and runs at most `size`
    items ahead. Exceptions raised by `items` are raised to the consumer; `close()` (also
    on garbage collection) stops the reader."""

    def __init__(self, items: Iterable[T], size: int = 2):
        self._buffer: queue.Queue = queue.Queue(maxsize=size)
        self._stop = threading.Event()
        self._finished = False
        # The reader sees the caller's context: the limits in force (skillret.limits) apply
        # to what it reads, as they would on the caller's thread.
        context = contextvars.copy_context()
        self._reader = threading.Thread(target=context.run, args=(self._work, iter(items)),
                                        name="skillret-prefetch", daemon=True)
        self._reader.start()

    def _put(self, item) -> bool:
        while not self._stop.is_set():
            try:
                self._buffer.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def _work(self, items) -> None:
        try:
            for item in items:
                if not self._put(item):
                    return
            self._put(_DONE)
        except BaseException as exc:  # handed to the consumer, raised there
            self._put(_Failed(exc))

    def __iter__(self) -> "prefetch[T]":
        return self

    def __next__(self) -> T:
        if self._finished:
            raise StopIteration
        item = self._buffer.get()
        if item is _DONE:
            self.close()
            raise StopIteration
        if isinstance(item, _Failed):
            self.close()
            raise item.error
        return item

    def close(self) -> None:
        self._finished = True
        self._stop.set()
        if self._reader is not threading.current_thread():
            self._reader.join()

    def __del__(self) -> None:
        self._stop.set()
