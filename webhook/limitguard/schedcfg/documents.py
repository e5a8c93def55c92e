"""YAML loading for the validator: safe, bounded, strict about duplicates, and position-aware.

Why not plain ``yaml.safe_load``:

* the input comes from ``kubectl apply`` (the webhook) and from CI, so it is untrusted: size, nesting depth,
  alias count and the alias-expanded node count are capped before anything walks the data (a "billion
  laughs" document is small as text but explodes when traversed);
* kube-scheduler decodes strictly (a repeated key is an error, not "last one wins");
* YAML timestamps stay strings, as they do after sigs.k8s.io/yaml's YAML-to-JSON step;
* every key and list item keeps its line/column so findings can point at ``file:line:col``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from limitguard.core.paths import path_join
from limitguard.core.text import clip
from limitguard.errors import LimitguardError

MAX_INPUT_BYTES = 1024 * 1024  # a ConfigMap cannot hold more than 1 MiB either
MAX_DEPTH = 64
MAX_ALIASES = 128
MAX_NODES = 100_000

_BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_MERGE_TAG = "tag:yaml.org,2002:merge"


class YamlInputError(LimitguardError, ValueError):
    """The text is not acceptable YAML (syntax error, duplicate key, or over a safety limit).

    ``line``/``column`` are 1-based and refer to the text that was parsed (None when unknown).
    """

    def __init__(
        self, problem: str, line: int | None = None, column: int | None = None, rule: str = "yaml.syntax"
    ) -> None:
        self.problem = problem
        self.line = line
        self.column = column
        self.rule = rule
        where = f" at line {line}, column {column}" if line is not None else ""
        label = "YAML syntax error" if rule == "yaml.syntax" else "YAML input rejected"
        super().__init__(f"{label}{where}: {problem}")


class _StrictLoader(_BaseLoader):  # type: ignore[misc,valid-type]
    """Safe loader that rejects duplicate keys and keeps timestamps as strings."""

    yaml_implicit_resolvers: ClassVar[dict[Any, list[tuple[str, Any]]]] = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP_TAG]
        for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
    }

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[tuple[str, str], Node] = {}
        for key_node, _ in node.value:
            if not isinstance(key_node, ScalarNode) or key_node.tag == _MERGE_TAG:
                continue
            marker = (key_node.tag, key_node.value)
            if marker in seen:
                first = seen[marker].start_mark
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"duplicate key {key_node.value!r} (first defined at line {first.line + 1}, "
                    f"column {first.column + 1})",
                    key_node.start_mark,
                )
            seen[marker] = key_node
        return super().construct_mapping(node, deep=deep)


@dataclass
class Document:
    """One YAML document: its data plus where each key / list item starts in the parsed text.

    ``positions`` maps a rendered field path (``profiles[0].pluginConfig``) to a 1-based (line, column).
    ``literal_blocks`` maps the path of each ``|`` block scalar to (line of its first content line,
    indentation), which lets a document embedded in a ConfigMap report lines of the outer file.
    """

    index: int
    data: Any
    positions: dict[str, tuple[int, int]] = field(default_factory=dict)
    literal_blocks: dict[str, tuple[int, int]] = field(default_factory=dict)

    def locate(self, path: str) -> tuple[int, int] | None:
        """Position of ``path`` or of its nearest ancestor that has one."""
        while True:
            if path in self.positions:
                return self.positions[path]
            parent = _parent_path(path)
            if parent is None:
                return self.positions.get("")
            path = parent


_LAST_SEGMENT = re.compile(r'(\.[A-Za-z_][A-Za-z0-9_]*|\[[0-9]+\]|\["(?:[^"\\]|\\.)*"\]|\[[^\]]*\])$')


def _parent_path(path: str) -> str | None:
    if not path:
        return None
    match = _LAST_SEGMENT.search(path)
    if match is None:  # a leading bare identifier
        return ""
    return path[: match.start()]


def check_size(text: str) -> None:
    """Reject inputs over MAX_INPUT_BYTES before any parsing."""
    size = len(text.encode("utf-8", errors="replace"))
    if size > MAX_INPUT_BYTES:
        raise YamlInputError(
            f"input is {size} bytes, more than the limit of {MAX_INPUT_BYTES} bytes", rule="yaml.too-large"
        )


def _prescan(text: str) -> None:
    """Enforce the depth and alias limits before anything is constructed.

    The fast (libyaml) scanner runs first. When it fails, the pure-Python scanner runs again over the
    same text, so the answer is limitguard's own (libyaml since PyYAML 6.0.4 refuses flow nesting past
    1,000 levels with a message of its own, and its token look-ahead reaches that before our cap).
    """
    try:
        _prescan_with(_BaseLoader, text)
    except YamlInputError:
        raise
    except yaml.YAMLError:
        if _BaseLoader is yaml.SafeLoader:
            raise
        _prescan_with(yaml.SafeLoader, text)
        raise


def _prescan_with(loader_class: type, text: str) -> None:
    """Stream the parser events (no recursion, no construction) to enforce depth and alias limits."""
    depth = aliases = 0
    loader = loader_class(text)
    try:
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > MAX_DEPTH:
                    raise YamlInputError(
                        f"nesting deeper than {MAX_DEPTH} levels",
                        *_mark(event.start_mark),
                        rule="yaml.too-deep",
                    )
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
            elif isinstance(event, yaml.AliasEvent):
                aliases += 1
                if aliases > MAX_ALIASES:
                    raise YamlInputError(
                        f"more than {MAX_ALIASES} aliases (possible alias bomb)",
                        *_mark(event.start_mark),
                        rule="yaml.too-many-aliases",
                    )
    finally:
        loader.dispose()


def _mark(mark: Any) -> tuple[int | None, int | None]:
    if mark is None:
        return None, None
    return mark.line + 1, mark.column + 1


def _from_yaml_error(exc: yaml.YAMLError) -> YamlInputError:
    if isinstance(exc, yaml.MarkedYAMLError):
        problem = exc.problem or "invalid YAML"
        if exc.context:
            ctx_where = ""
            if exc.context_mark is not None:
                ctx_where = f" at line {exc.context_mark.line + 1}, column {exc.context_mark.column + 1}"
            problem = f"{problem} ({exc.context}{ctx_where})"
        line, column = _mark(exc.problem_mark)
        return YamlInputError(problem, line, column)
    if isinstance(exc, yaml.reader.ReaderError):
        return YamlInputError(f"unacceptable character #x{exc.character:04x}: {exc.reason}")
    return YamlInputError(str(exc))


def load_documents(text: str) -> list[Document]:
    """Parse every document of ``text``; raises YamlInputError on syntax errors or exceeded limits."""
    if text.startswith("\ufeff"):
        text = text[1:]
    check_size(text)
    try:
        _prescan(text)
        documents: list[Document] = []
        lines = text.splitlines()
        loader = _StrictLoader(text)
        try:
            while loader.check_node():
                node = loader.get_node()
                document = Document(index=len(documents) + 1, data=None)
                _index_positions(node, document, lines)
                document.data = loader.construct_document(node)
                documents.append(document)
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        raise _from_yaml_error(exc) from exc
    except YamlInputError:
        raise
    except ValueError as exc:  # an integer past Python's 4,300 digits (int() refuses to convert it)
        raise YamlInputError(f"a value cannot be read: {clip(str(exc), 120)}", rule="yaml.value") from exc
    except RecursionError as exc:  # pragma: no cover - prescan's depth cap should prevent this
        raise YamlInputError("document nested too deeply", rule="yaml.too-deep") from exc
    return documents


def _index_positions(root: Node, document: Document, lines: list[str]) -> None:
    """Record positions iteratively, counting alias-expanded nodes so a bomb is refused, not walked."""
    budget = MAX_NODES
    stack: list[tuple[Node, str, int]] = [(root, "", 0)]
    document.positions[""] = _mark(root.start_mark)  # type: ignore[assignment]
    while stack:
        node, path, depth = stack.pop()
        budget -= 1
        if budget < 0:
            raise YamlInputError(
                f"document expands to more than {MAX_NODES} nodes through aliases (possible alias bomb)",
                *_mark(node.start_mark),
                rule="yaml.too-many-nodes",
            )
        if depth > MAX_DEPTH:  # aliases can nest deeper than the text (even recursively)
            raise YamlInputError(
                f"aliases nest deeper than {MAX_DEPTH} levels (recursive or alias bomb)",
                *_mark(node.start_mark),
                rule="yaml.too-deep",
            )
        if isinstance(node, MappingNode):
            for key_node, value_node in node.value:
                key = str(key_node.value) if isinstance(key_node, ScalarNode) else "?"
                child = path_join(path, key)
                document.positions.setdefault(child, _mark(key_node.start_mark))  # type: ignore[arg-type]
                stack.append((value_node, child, depth + 1))
        elif isinstance(node, SequenceNode):
            for i, item in enumerate(node.value):
                child = path_join(path, i)
                document.positions.setdefault(child, _mark(item.start_mark))  # type: ignore[arg-type]
                stack.append((item, child, depth + 1))
        elif isinstance(node, ScalarNode) and node.style == "|":
            document.literal_blocks[path] = _literal_origin(node, lines)


def _literal_origin(node: ScalarNode, lines: list[str]) -> tuple[int, int]:
    """(1-based line of the first content line, indentation) of a ``|`` block scalar."""
    first_line = node.start_mark.line + 2  # content starts on the line after the indicator
    indent = 0
    for candidate in lines[first_line - 1 :]:
        if candidate.strip():
            indent = len(candidate) - len(candidate.lstrip(" "))
            break
    return first_line, indent
