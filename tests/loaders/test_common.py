"""Shared file readers of the loaders."""

import pytest

from kstp.errors import InputError
from kstp.loaders.common import read_csv, read_header, read_text


@pytest.mark.parametrize("reader", [read_text, read_csv])
def test_read_text_not_utf8_names_line_and_byte(tmp_path, reader):
    path = tmp_path / "c.csv"
    path.write_bytes(b"id,code\nA,a\nB,\xe9\n")  # latin-1 e-acute on line 3, byte 14
    with pytest.raises(InputError, match=r"c\.csv:3: not UTF-8 text \(byte 14\); save the file as UTF-8$"):
        reader(path)


def test_read_header_not_utf8_names_line_one(tmp_path):
    path = tmp_path / "h.csv"
    path.write_bytes(b"id,c\xf3de\nA,a\n")
    with pytest.raises(InputError, match=r"h\.csv:1: not UTF-8 text \(byte 4\)"):
        read_header(path)


NUL_FILES = [
    (b"id,text\nq1,a\x00b\n", 2),                 # a NUL byte in a cell
    (b"\x00" * 200, 1),                            # a single-line binary file that is valid UTF-8
    (b"id,code\x00,description\n", 1),            # in the header
]


@pytest.mark.parametrize(("reader", "content", "line"), [
    *[(reader, content, line) for reader in (read_text, read_csv) for content, line in NUL_FILES],
    *[(read_header, content, line) for content, line in NUL_FILES if line == 1],  # it reads the first record
])
def test_a_nul_byte_is_refused_with_file_and_line(tmp_path, reader, content, line):
    path = tmp_path / "b.csv"
    path.write_bytes(content)
    with pytest.raises(InputError, match=rf"b\.csv:{line}: a NUL byte: a binary file, not text"):
        reader(path)


def test_a_cell_over_the_csv_module_limit_is_read(tmp_path):
    path = tmp_path / "big.csv"
    text = "x" * 1_000_000  # the csv module's default limit is 131,072 characters
    path.write_text(f'id,text\nq1,"{text}"\nq2,short\n')
    columns, rows = read_csv(path)
    assert columns == ["id", "text"] and [len(r.values["text"]) for r in rows] == [1_000_000, 5]
