"""aiohttp's internals are touched in one module only: limitguard.http.fast, whose docstring lists each
contact and whose mode runs only on an aiohttp it was tested with (limitguard.http.modes).

Read from the product's source: no other module imports an aiohttp module past the public ones,
subclasses an aiohttp class past the public bases below, reads or writes an underscored attribute
that aiohttp's server and client classes define, or sets an attribute of an aiohttp object (as a
swap of the low-level server's `request_handler` would).
"""

from __future__ import annotations

import ast
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from tests.support import REPO

PRODUCT = REPO / "webhook" / "limitguard"
OWNER = PRODUCT / "http" / "fast.py"
PUBLIC_MODULES = {"aiohttp", "aiohttp.web", "aiohttp.hdrs"}
PUBLIC_BASES = {"web.BaseSite"}  # limitguard.http.site: an abstract base, keeping state of its own
AIOHTTP_CLASSES = (
    web.RequestHandler,
    web.Server,
    web.BaseSite,
    web.TCPSite,
    web.BaseRunner,
    web.AppRunner,
    web.Application,
    web.BaseRequest,
    web.Request,
    web.StreamResponse,
    web.Response,
    aiohttp.StreamReader,
    aiohttp.ClientSession,
    aiohttp.ClientResponse,
    aiohttp.TCPConnector,
)


def attribute_names(private: bool) -> set[str]:
    names: set[str] = set()
    for cls in AIOHTTP_CLASSES:
        for klass in cls.__mro__[:-1]:  # not object's
            names.update(getattr(klass, "__slots__", ()))
            names.update(vars(klass))
    return {
        name
        for name in names
        if not name.startswith("__") and name.startswith("_") == private and not name.isupper()
    }


PRIVATE = attribute_names(private=True)
SETTABLE = {"request_handler", "request_factory", "handler_cancellation"}  # the low-level server's


def product_modules() -> list[Path]:
    return sorted(path for path in PRODUCT.rglob("*.py") if path != OWNER and "testing" not in path.parts)


def contacts(path: Path) -> list[str]:
    """Where *path* reaches into aiohttp, as `line: what`."""
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("aiohttp"):
            if node.module not in PUBLIC_MODULES:
                found.append(f"{node.lineno}: imports {node.module}")
        elif isinstance(node, ast.Import):
            found += [
                f"{node.lineno}: imports {alias.name}"
                for alias in node.names
                if alias.name.startswith("aiohttp") and alias.name not in PUBLIC_MODULES
            ]
        elif isinstance(node, ast.ClassDef):
            for base in node.bases:
                text = ast.unparse(base)
                if text.startswith(("web.", "aiohttp.")) and text not in PUBLIC_BASES:
                    found.append(f"{node.lineno}: class {node.name} extends {text}")
        elif isinstance(node, ast.Attribute) and node.attr in PRIVATE:
            owner = ast.unparse(node.value)
            if owner not in ("self", "cls"):
                found.append(f"{node.lineno}: {owner}.{node.attr}")
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found += [
                f"{node.lineno}: sets {ast.unparse(target)}"
                for target in targets
                if isinstance(target, ast.Attribute) and target.attr in SETTABLE
            ]
    return found


def test_the_names_checked_are_aiohttps_own() -> None:
    """What the fast mode uses is among them, so the check below would see it anywhere else."""
    assert {"_waiter", "_lingering_time", "_keepalive", "_reading_paused", "_kwargs", "_server"} <= PRIVATE


def test_no_other_product_module_touches_aiohttps_internals() -> None:
    found = {str(path.relative_to(PRODUCT)): contacts(path) for path in product_modules()}
    assert {module: lines for module, lines in found.items() if lines} == {}
    assert "http/plain.py" in found and "http/site.py" in found  # the scan read the product


@pytest.mark.parametrize(
    "source",
    [
        "from aiohttp.web_protocol import RequestHandler\n",
        "import aiohttp.helpers\n",
        "class Answer(web.StreamResponse):\n    pass\n",
        "waiting = protocol._waiter\n",
        "request._payload_writer = None\n",
        "server.request_handler = handle\n",
    ],
)
def test_each_kind_of_contact_is_seen(tmp_path: Path, source: str) -> None:
    module = tmp_path / "module.py"
    module.write_text(source)
    assert len(contacts(module)) == 1


def test_the_fast_mode_module_is_where_they_are() -> None:
    found = contacts(OWNER)
    assert any("imports aiohttp.web_protocol" in line for line in found)
    assert any("sets server.request_handler" in line for line in found)
    assert any("server._kwargs" in line for line in found)
