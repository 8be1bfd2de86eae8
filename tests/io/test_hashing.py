"""skillret/io/hashing.py: a file's sha256, and a code folder's (what reports/settings.json
records of the code the per-run stages run)."""

from __future__ import annotations

import hashlib

from skillret.io.hashing import sha256, tree_sha256


def test_a_file_is_hashlib(tmp_path):
    data = bytes(range(256)) * 9000                     # more than one read block
    (tmp_path / "f").write_bytes(data)
    assert sha256(tmp_path / "f") == hashlib.sha256(data).hexdigest()


def test_a_folder_changes_exactly_when_its_code_does(tmp_path):
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "a.py").write_text("A = 1\n")
    (root / "sub" / "b.py").write_text("B = 2\n")
    first = tree_sha256(root)
    # bytecode and packaging metadata are not code
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0" * 10)
    (root / "sub" / "b.pyc").write_bytes(b"\1")
    (root / "pkg.egg-info").mkdir()
    (root / "pkg.egg-info" / "PKG-INFO").write_text("x")
    assert tree_sha256(root) == first
    seen = {first}
    (root / "sub" / "b.py").write_text("B = 3\n")                       # an edit
    seen.add(tree_sha256(root))
    (root / "sub" / "b.py").rename(root / "sub" / "c.py")              # a rename
    seen.add(tree_sha256(root))
    (root / "data.json").write_text("{}")                                # a new file
    seen.add(tree_sha256(root))
    (root / "sub" / "c.py").write_text("B = 2\n")
    (root / "sub" / "c.py").rename(root / "sub" / "b.py")
    (root / "data.json").unlink()                                       # back as it was
    assert len(seen) == 4 and tree_sha256(root) == first
