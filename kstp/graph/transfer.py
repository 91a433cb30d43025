"""Moving and backing up a graph: portable CSV files with a manifest, read back on either engine.

An export folder holds::

    manifest.json                          format, schema version, kstp version, dataset,
                                           and per file: what it holds, rows, SHA-256
    nodes/<Label>.csv                      id:ID(<Label>),<property>:<type>,...
    relationships/<TYPE>-<From>-<To>.csv   :START_ID(<From>),:END_ID(<To>),<property>:<type>,...

The files are in the input format of ``neo4j-admin database import full``, so the same
bytes can seed a fresh Neo4j database: one ID space per label, typed columns
(``string``, ``long``, ``double``, ``boolean``, ``string[]`` and ``double[]`` with
:data:`ARRAY_DELIMITER` between elements), every present value quoted and a missing one
an empty unquoted field, so an empty string stays one (neo4j-admin's default, and what
pyarrow's CSV reader is told here). Doubles are written in their shortest round-trip
form, so a value comes back bit for bit. :func:`neo4j_admin_command` prints the command.

Assumes the graph holds only the properties of :mod:`kstp.graph.schema` (every kstp
write is checked against it) and no NaN (kstp stores missing values as nulls).
"""

from __future__ import annotations

import hashlib
import json
import shlex
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from kstp._version import __version__
from kstp.errors import ConfigError, DataNotFoundError, InputError
from kstp.graph import schema
from kstp.graph.store import GraphStore, WriteReport

__all__ = ["FORMAT", "ARRAY_DELIMITER", "export_graph", "read_manifest", "Export", "read_export", "import_graph",
           "neo4j_admin_args", "neo4j_admin_command", "aura_upload_command"]

#: The ``format`` of a manifest written here.
FORMAT = "kstp-graph-export"
#: Between the elements of an array cell: neo4j-admin's default, so its command needs no flag.
ARRAY_DELIMITER = ";"
_TYPES = {"STRING": "string", "INT64": "long", "DOUBLE": "double", "BOOLEAN": "boolean",
          "STRING[]": "string[]", "DOUBLE[]": "double[]"}
_ARROW = {"STRING": pa.string(), "INT64": pa.int64(), "DOUBLE": pa.float64(), "BOOLEAN": pa.bool_()}


def _digest(path: Path) -> str:
    sha = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()


def _cell(value, kind: str, where: str):
    """One value as the text or Arrow scalar its CSV column takes (arrays joined here)."""
    if kind.endswith("[]"):
        if not isinstance(value, list | tuple | np.ndarray):  # an array arrives as a list (Neo4j) or a numpy
            return None  # array (Ladybug); a missing one as None or NaN
        items = [repr(float(v)) if kind == "DOUBLE[]" else str(v) for v in value]
        if any(ARRAY_DELIMITER in item for item in items):
            raise InputError(f"{where}: an array element contains {ARRAY_DELIMITER!r}, the array delimiter of the "
                             "export format; it cannot be written")
        return ARRAY_DELIMITER.join(items)
    if pd.isna(value):
        return None
    if kind == "INT64":
        return int(value)
    if kind == "DOUBLE":
        return float(value)
    return bool(value) if kind == "BOOLEAN" else str(value)


def _column(values: pd.Series, kind: str, where: str) -> pa.Array:
    """One column as the Arrow array its CSV column is written from (arrays joined here).

    Scalars convert in Arrow, column at a time (5.4 M answers in about a second; a
    categorical's codes are decoded there); a column whose values do not convert so (a number
    in a string property) and array columns go value by value through :func:`_cell`.
    """
    if not kind.endswith("[]"):
        if isinstance(values.dtype, pd.CategoricalDtype) and kind == "STRING" and \
                pd.api.types.infer_dtype(values.cat.categories, skipna=True) in ("string", "empty"):
            return pa.Array.from_pandas(values).dictionary_decode().cast(pa.string())
        plain = values.astype(object) if isinstance(values.dtype, pd.CategoricalDtype) else values
        if plain.dtype == object:
            plain = plain.where(plain.notna(), None)
        try:
            return pa.Array.from_pandas(plain, type=_ARROW[kind])
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            pass
    return pa.array([_cell(v, kind, where) for v in values.tolist()],
                    pa.string() if kind.endswith("[]") else _ARROW[kind])


def _line_breaks(values: pd.Series) -> bool:
    """Whether a string of ``values`` holds a line break (a categorical's categories are looked at)."""
    strings = values.cat.categories if isinstance(values.dtype, pd.CategoricalDtype) else values
    if not len(strings) or pd.api.types.infer_dtype(strings, skipna=True) not in ("string", "mixed"):
        return False
    array = pa.array(pd.Series(strings).map(lambda v: v if isinstance(v, str) else None).tolist(), pa.string())
    return any(pc.any(pc.match_substring(array, brk)).as_py() for brk in ("\n", "\r"))


#: Rows converted and written at a time: memory follows the chunk (two columns of strings of
#: 1 M answers), not the file.
CSV_CHUNK = 1_000_000


def _write_csv(path: Path, header: list[str], columns: list[tuple[str, str]], parts, what: str) -> tuple[int, bool]:
    """Write the frames ``parts`` one after another as the CSV file ``path``, :data:`CSV_CHUNK` rows
    at a time; the rows written, and whether a value holds a line break (a multi-line field)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    written, multiline = 0, False
    with pa.OSFile(str(path), "wb") as out:
        out.write((",".join(header) + "\n").encode())
        for rows in parts:
            rows = rows.reset_index(drop=True)
            multiline = multiline or any(_line_breaks(rows[name]) for name, kind in columns if kind == "STRING")
            for start in range(0, len(rows), CSV_CHUNK):
                chunk = rows.iloc[start:start + CSV_CHUNK].reset_index(drop=True)
                arrays = [_column(chunk[name], kind, f"{what}.{name}") for name, kind in columns]
                multiline = multiline or any(
                    pc.any(pc.match_substring(array, brk)).as_py() for brk in ("\n", "\r")
                    for (_, kind), array in zip(columns, arrays, strict=True) if kind == "STRING[]" and len(array))
                pacsv.write_csv(pa.table(arrays, names=[f"c{i}" for i in range(len(arrays))]), out,
                                pacsv.WriteOptions(include_header=False, quoting_style="all_valid"))
            written += len(rows)
    return written, multiline


def _subset(dataset: str, nodes: dict[str, pd.DataFrame],
            rels: dict[tuple[str, str, str], pd.DataFrame]) -> dict[str, set]:
    """The node ids one dataset needs: its own nodes and its frameworks' curricula."""
    def ends(rel, from_label, to_label):
        return rels.get((rel, from_label, to_label), pd.DataFrame(columns=["from_id", "to_id"]))

    if dataset not in set(nodes["Dataset"]["id"]):
        raise DataNotFoundError(f"no dataset {dataset!r} in the graph; it has: "
                                f"{', '.join(nodes['Dataset']['id']) or 'none'}")
    keep: dict[str, set] = {label: set() for label in schema.node_labels()}
    keep["Dataset"] = {dataset}
    in_dataset = ends("IN_DATASET", "Question", "Dataset")
    keep["Question"] = set(in_dataset.loc[in_dataset["to_id"] == dataset, "from_id"])
    runs = nodes["Run"]
    keep["Run"] = set(runs.loc[runs["dataset"] == dataset, "id"])
    to, in_run = ends("TO", "Response", "Question"), ends("IN_RUN", "Response", "Run")
    keep["Response"] = set(to.loc[to["to_id"].isin(keep["Question"]), "from_id"]) | \
        set(in_run.loc[in_run["to_id"].isin(keep["Run"]), "from_id"])
    steps = ends("HAS_STEP", "Response", "CotStep")
    keep["CotStep"] = set(steps.loc[steps["from_id"].isin(keep["Response"]), "to_id"])
    states = nodes["KnowledgeState"]
    keep["KnowledgeState"] = set(states.loc[states["dataset"] == dataset, "id"])
    answered, gave, scored = (ends("ANSWERED", "Learner", "Question"), ends("GAVE", "Learner", "Response"),
                              ends("SCORED_ON", "Learner", "Dataset"))
    learners = nodes["Learner"]
    keep["Learner"] = set(answered.loc[answered["to_id"].isin(keep["Question"]), "from_id"]) | \
        set(gave.loc[gave["to_id"].isin(keep["Response"]), "from_id"]) | \
        set(scored.loc[scored["to_id"] == dataset, "from_id"]) | set(learners.loc[learners["dataset"] == dataset, "id"])
    assesses = ends("ASSESSES", "Question", "Concept")
    concepts = nodes["Concept"]
    assessed = set(assesses.loc[assesses["from_id"].isin(keep["Question"]), "to_id"])
    frameworks = set(concepts.loc[concepts["id"].isin(assessed), "framework"].dropna())
    keep["Framework"] = frameworks
    keep["Concept"] = set(concepts.loc[concepts["framework"].isin(frameworks), "id"])
    part_of = {pair: ends("PART_OF", *pair) for pair in schema.rel_types()["PART_OF"].endpoints}
    def parts_of(child, parents):
        links = part_of[(child, parents)]
        return set(links.loc[links["to_id"].isin(keep[parents]), "from_id"])

    keep["Domain"] = parts_of("Domain", "Framework")
    keep["Cluster"] = parts_of("Cluster", "Domain") | parts_of("Cluster", "Framework")
    return keep


def export_graph(store: GraphStore, folder: str | Path, dataset: str | None = None) -> dict:
    """Write the graph, or one dataset with what it needs, as CSV files and a manifest.

    Parameters
    ----------
    folder : str or Path
        A new or empty folder.
    dataset : str, optional
        Export only this dataset: its Dataset node, Questions, the Learners that answered
        them (with those answers only), its runs with their Responses and CoT steps, its
        KnowledgeStates, and the whole curriculum of every framework its questions
        assess (Framework, Domains, Clusters, Concepts and their edges). Every
        relationship between exported nodes is exported.

    Returns
    -------
    dict
        The manifest written to ``manifest.json``.

    Raises
    ------
    ConfigError
        When ``folder`` exists and is not an empty folder.
    DataNotFoundError
        When ``dataset`` is not in the graph.
    InputError
        When an array element contains :data:`ARRAY_DELIMITER`.
    """
    folder = Path(folder)
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise ConfigError(f"{folder} is not an empty folder; export into a new one")
    nodes = {label: store.nodes(label) for label in schema.node_labels()}
    keys = [(rel.name, a, b) for rel in schema.rel_types().values() for a, b in rel.endpoints]
    if dataset is not None:  # the subset needs every relationship to decide; the whole graph streams
        rels = {key: store.relationships(*key) for key in keys}
        keep = _subset(dataset, nodes, rels)
        nodes = {label: rows[rows["id"].isin(keep[label])] for label, rows in nodes.items()}
        rels = {key: rows[rows["from_id"].isin(keep[key[1]]) & rows["to_id"].isin(keep[key[2]])]
                for key, rows in rels.items()}
    else:  # the relationships of a few thousand from-nodes in memory at a time: read, written, let go
        rels = {key: store.relationship_batches(*key) for key in keys}
    files = []
    for label, rows in nodes.items():
        if rows.empty:
            continue
        props = schema.node_label(label).properties
        header = [f"id:ID({label})", *(f"{name}:{_TYPES[kind]}" for name, kind in props[1:])]
        path = folder / "nodes" / f"{label}.csv"
        _, multiline = _write_csv(path, header, list(props), [rows], label)
        files.append({"path": f"nodes/{label}.csv", "label": label, "rows": len(rows), "sha256": _digest(path),
                      "multiline": multiline})
    for (rel, from_label, to_label), rows in rels.items():
        props = schema.rel_type(rel, from_label, to_label).properties
        header = [f":START_ID({from_label})", f":END_ID({to_label})",
                  *(f"{name}:{_TYPES[kind]}" for name, kind in props)]
        name = f"relationships/{rel}-{from_label}-{to_label}.csv"
        written, multiline = _write_csv(folder / name, header, [("from_id", "STRING"), ("to_id", "STRING"), *props],
                                        [rows] if isinstance(rows, pd.DataFrame) else rows, rel)
        if not written:
            (folder / name).unlink()
            continue
        files.append({"path": name, "type": rel, "from": from_label, "to": to_label, "rows": written,
                      "multiline": multiline, "sha256": _digest(folder / name)})
    manifest = {"format": FORMAT, "schemaVersion": schema.SCHEMA_VERSION, "kstpVersion": __version__,
                "dataset": dataset, "arrayDelimiter": ARRAY_DELIMITER, "files": files}
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def read_manifest(folder: str | Path) -> dict:
    """The manifest of an export folder, checked: format, schema version, every file's SHA-256.

    Raises
    ------
    DataNotFoundError
        When the folder has no ``manifest.json`` or a file it lists is missing.
    InputError
        When the manifest is not kstp's, has another schema version, or a file's
        checksum differs from the manifest's.
    """
    folder = Path(folder)
    path = folder / "manifest.json"
    if not path.is_file():
        raise DataNotFoundError(f"no manifest.json in {folder}: not a kstp export folder (kstp db export writes one)")
    try:
        manifest = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path} is not a kstp export manifest ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise InputError(f"{path} is not a kstp export manifest (format is not {FORMAT!r})")
    if manifest.get("schemaVersion") != schema.SCHEMA_VERSION:
        raise InputError(f"{path} has schema version {manifest.get('schemaVersion')!r}; this kstp reads version "
                         f"{schema.SCHEMA_VERSION}: import it with the kstp that exported it")
    for entry in manifest["files"]:
        file = folder / entry["path"]
        if not file.is_file():
            raise DataNotFoundError(f"{file} is listed in the manifest but missing")
        if _digest(file) != entry["sha256"]:
            raise InputError(f"{file} does not match its SHA-256 in the manifest: the file changed or is damaged "
                             "since the export; nothing was imported")
    return manifest


def _read_csv(path: Path, columns: list[tuple[str, str]]) -> pd.DataFrame:
    """A file of :func:`_write_csv` as typed columns; a missing value is ``None``."""
    table = pacsv.read_csv(path, read_options=pacsv.ReadOptions(column_names=[c for c, _ in columns],
                                                               skip_rows=1, block_size=1 << 26),
                           parse_options=pacsv.ParseOptions(newlines_in_values=True),
                           convert_options=pacsv.ConvertOptions(
                               column_types={c: pa.string() for c, _ in columns}, strings_can_be_null=True,
                               quoted_strings_can_be_null=False))
    out = {}
    for name, kind in columns:
        column = table[name]
        if kind.endswith("[]"):
            convert = float if kind == "DOUBLE[]" else str
            out[name] = pd.Series([None if v is None else [convert(x) for x in v.split(ARRAY_DELIMITER)] if v else []
                                   for v in column.to_pylist()], dtype=object)
        else:
            out[name] = column.cast(_ARROW[kind]).to_pandas(integer_object_nulls=True)
    return pd.DataFrame(out)


@dataclass
class Export:
    """An export folder read and checked by :func:`read_export`: its node and relationship files' rows,
    each with its manifest entry, nodes first."""

    folder: Path
    nodes: list[tuple[dict, pd.DataFrame]]
    relationships: list[tuple[dict, pd.DataFrame]]

    def check_ends(self, store: GraphStore | None) -> None:
        """Refuse a relationship whose end is a node neither of the files nor of ``store``'s graph.

        ``store`` None: a graph that does not exist yet, which holds no node (checked
        before it is created, so a refused import creates nothing).

        Raises
        ------
        InputError
            With the file, its line and the first such id, and how many there are.
        """
        _check_ends(store, self.folder, self.nodes, self.relationships)


def read_export(folder: str | Path) -> Export:
    """Read an export folder whole and check it, before any graph is opened.

    Checks the whole manifest (:func:`read_manifest`) and every file's header against
    the graph model, and reads every file.

    Raises
    ------
    DataNotFoundError, InputError
        As :func:`read_manifest`; and :class:`InputError` when a file's header is not
        the graph model's.
    """
    folder = Path(folder)
    manifest = read_manifest(folder)
    nodes, relationships = [], []
    for entry in sorted(manifest["files"], key=lambda e: "type" in e):  # nodes first
        path = folder / entry["path"]
        if "label" in entry:
            props = schema.node_label(entry["label"]).properties
            rows = _read_csv(_checked_header(path, [f"id:ID({entry['label']})",
                                                    *(f"{n}:{_TYPES[k]}" for n, k in props[1:])]), list(props))
            nodes.append((entry, rows))
        else:
            props = schema.rel_type(entry["type"], entry["from"], entry["to"]).properties
            header = [f":START_ID({entry['from']})", f":END_ID({entry['to']})",
                      *(f"{n}:{_TYPES[k]}" for n, k in props)]
            rows = _read_csv(_checked_header(path, header), [("from_id", "STRING"), ("to_id", "STRING"), *props])
            relationships.append((entry, rows))
    return Export(folder, nodes, relationships)


def import_graph(store: GraphStore, folder: str | Path | Export) -> dict[str, WriteReport]:
    """Load an export folder into ``store``, empty or not; return what was written per file.

    Reads and checks everything before it writes anything: the whole folder
    (:func:`read_export`, unless ``folder`` is what it returned) and every relationship's
    two ends, each a node of the files or of the graph. Nodes are written before
    relationships, and as every kstp write: a node or relationship already in the graph
    takes the file's values, one not in the files stays.

    Raises
    ------
    DataNotFoundError, InputError
        As :func:`read_export`; and :class:`InputError` when a relationship names a node
        that is neither in the files nor in the graph (with the file, its line and the id).
    """
    export = folder if isinstance(folder, Export) else read_export(folder)
    export.check_ends(store)
    written: dict[str, WriteReport] = {}
    for entry, rows in export.nodes:
        written[entry["path"]] = store.write_nodes(entry["label"], rows)
    for entry, rows in export.relationships:
        written[entry["path"]] = store.write_relationships(entry["type"], entry["from"], entry["to"], rows)
    return written


def _check_ends(store: GraphStore | None, folder: Path, nodes: list, relationships: list) -> None:
    """Raise :class:`InputError` for the first relationship end that no file and no graph node holds
    (``store`` None: no graph yet)."""
    known: dict[str, set] = {}
    for entry, rows in nodes:
        known.setdefault(entry["label"], set()).update(rows["id"])
    for entry, rows in relationships:
        for column, label in (("from_id", entry["from"]), ("to_id", entry["to"])):
            ids = known.setdefault(label, set())
            missing = sorted(set(rows[column]) - ids)
            if missing:
                if store is not None:
                    ids.update(store.nodes(label, missing)["id"])
                absent = [i for i in missing if i not in ids]
                if absent:
                    line = int((rows[column] == absent[0]).to_numpy().argmax()) + 2  # 1-based, after the header
                    raise InputError(f"{folder / entry['path']}:{line}: {label} {absent[0]!r} is neither in the "
                                     f"export nor in the graph ({len(absent)} such ids); nothing was imported")


def _checked_header(path: Path, expected: list[str]) -> Path:
    with path.open(encoding="utf-8") as handle:
        header = handle.readline().rstrip("\n").split(",")
    if header != expected:
        differs = next((f"{a!r} where the graph model has {b!r}" for a, b in zip(header, expected, strict=False)
                        if a != b), f"{len(header)} columns where the graph model has {len(expected)}")
        raise InputError(f"{path}:1: the header has {differs}")
    return path


def neo4j_admin_args(folder: str | Path, database: str = "neo4j") -> list[str]:
    """The arguments of ``neo4j-admin`` that import an export folder into ``database``, replacing it.

    Examples
    --------
    >>> import json, tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "manifest.json").write_text(json.dumps({"files": [
    ...     {"path": "nodes/Concept.csv", "label": "Concept", "multiline": True},
    ...     {"path": "relationships/PREREQUISITE_OF-Concept-Concept.csv", "type": "PREREQUISITE_OF",
    ...      "multiline": False}]}))
    >>> for arg in neo4j_admin_args(folder):
    ...     print(arg.replace(str(folder.resolve()), "DIR"))
    database
    import
    full
    neo4j
    --overwrite-destination=true
    --multiline-fields-format=v2
    --multiline-fields=DIR/nodes/Concept.csv
    --nodes=Concept=DIR/nodes/Concept.csv
    --relationships=PREREQUISITE_OF=DIR/relationships/PREREQUISITE_OF-Concept-Concept.csv
    """
    folder = Path(folder).resolve()
    manifest = json.loads((folder / "manifest.json").read_text())
    # Multi-line fields slow the whole import down: name the files that have them (neo4j-admin's
    # v2 form); an export of an older kstp does not say, so all its files may.
    if all("multiline" in e for e in manifest["files"]):
        multiline = [str(folder / e["path"]) for e in manifest["files"] if e["multiline"]]
        lines = ["--multiline-fields-format=v2", f"--multiline-fields={','.join(multiline)}"] if multiline \
            else ["--multiline-fields=false"]
    else:
        lines = ["--multiline-fields=true"]
    return ["database", "import", "full", database, "--overwrite-destination=true", *lines,
            *(f"--nodes={e['label']}={folder / e['path']}" for e in manifest["files"] if "label" in e),
            *(f"--relationships={e['type']}={folder / e['path']}" for e in manifest["files"] if "type" in e)]


def neo4j_admin_command(folder: str | Path, database: str = "neo4j") -> str:
    """:func:`neo4j_admin_args` as the shell command to paste, one file a line.

    Examples
    --------
    >>> import json, tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "manifest.json").write_text(json.dumps({"files": [
    ...     {"path": "nodes/Concept.csv", "label": "Concept"},
    ...     {"path": "relationships/PREREQUISITE_OF-Concept-Concept.csv", "type": "PREREQUISITE_OF"}]}))
    >>> print(neo4j_admin_command(folder).replace(str(folder.resolve()), "DIR"))
    neo4j-admin database import full neo4j --overwrite-destination=true --multiline-fields=true \\
    --nodes=Concept=DIR/nodes/Concept.csv \\
    --relationships=PREREQUISITE_OF=DIR/relationships/PREREQUISITE_OF-Concept-Concept.csv
    """
    args = [shlex.quote(a) for a in neo4j_admin_args(folder, database)]
    first = next(i for i, a in enumerate(args) if a.startswith(("--nodes=", "--relationships=")))
    return " \\\n".join([" ".join(["neo4j-admin", *args[:first]]), *args[first:]])


def aura_upload_command(database: str = "neo4j") -> str:
    """The ``neo4j-admin`` steps that move a database imported locally to Aura: dump it, upload the dump.

    Run them where the database was imported (its server stopped); ``<id>`` is the Aura
    instance's, and the upload asks for its password.

    Examples
    --------
    >>> print(aura_upload_command())
    neo4j-admin database dump neo4j --to-path=dumps/ && \\
    neo4j-admin database upload neo4j --from-path=dumps/ --overwrite-destination=true \\
    --to-uri=neo4j+s://<id>.databases.neo4j.io
    """
    return (f"neo4j-admin database dump {database} --to-path=dumps/ && \\\n"
            f"neo4j-admin database upload {database} --from-path=dumps/ --overwrite-destination=true \\\n"
            "--to-uri=neo4j+s://<id>.databases.neo4j.io")
