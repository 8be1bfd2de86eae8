"""Read ahead on a second thread: parsing the next block overlaps scoring the current one.

pyarrow and numpy release the GIL in their kernels, so a reader thread feeding a small queue
keeps both cores busy. The queue is short, which bounds the memory held ahead of the consumer.
"""

from __future__ import annotations

import queue
import threading
from typing import Iterable, Iterator, TypeVar

T = TypeVar("T")
_DONE = object()


class _Failed:
    def __init__(self, error: BaseException):
        self.error = error


def prefetch(items: Iterable[T], size: int = 2) -> Iterator[T]:
    """Iterate ``items`` on a background thread, at most ``size`` items ahead.

    Exceptions raised by ``items`` are raised in the consumer; closing the generator early
    stops the reader.
    """
    buffer: queue.Queue = queue.Queue(maxsize=size)
    stop = threading.Event()

    def put(item) -> bool:
        while not stop.is_set():
            try:
                buffer.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for item in items:
                if not put(item):
                    return
            put(_DONE)
        except BaseException as exc:  # handed to the consumer, raised there
            put(_Failed(exc))

    reader = threading.Thread(target=work, name="skillret-prefetch", daemon=True)
    reader.start()
    try:
        while True:
            item = buffer.get()
            if item is _DONE:
                return
            if isinstance(item, _Failed):
                raise item.error
            yield item
    finally:
        stop.set()
        reader.join()
