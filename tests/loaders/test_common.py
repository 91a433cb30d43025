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
