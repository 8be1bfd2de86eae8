"""Read ahead on another thread (pyarrow and numpy release the GIL), bounded by a queue."""

from __future__ import annotations

import contextvars
import queue
import threading
from typing import Generic, Iterable, TypeVar

T = TypeVar("T")
_DONE = object()


class prefetch(Generic[T]):  # noqa: N801 - used like a function: for x in prefetch(items)
    """Iterate `items` on a thread at most `size` items ahead; its exceptions reach the
    consumer. `close()` (or garbage collection) stops it."""

    def __init__(self, items: Iterable[T], size: int = 2):
        self._buffer: queue.Queue = queue.Queue(maxsize=size)
        self._stop = threading.Event()
        self._finished = False
        # The caller's context, so the limits in force apply on the reader's thread too.
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
                if not self._put((item, None)):
                    return
            self._put((_DONE, None))
        except BaseException as exc:  # raised to the consumer
            self._put((None, exc))

    def __iter__(self) -> "prefetch[T]":
        return self

    def __next__(self) -> T:
        if self._finished:
            raise StopIteration
        item, error = self._buffer.get()
        if item is _DONE or error is not None:
            self.close()
            if error is not None:
                raise error
            raise StopIteration
        return item

    def close(self) -> None:
        self._finished = True
        self._stop.set()
        if self._reader is not threading.current_thread():
            self._reader.join()

    def __del__(self) -> None:
        self._stop.set()
