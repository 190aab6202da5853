"""Runs inside Pyodide (started by run.mjs): install the wheels offline with micropip, load the xlwings Lite main.py
the way Lite does, call every case, and report what happened as JSON.

Two ways to call a function:

- ``xlwings`` (only when an xlwings licence key is given): the real Office.js custom-function path of xlwings, as
  Lite runs it: ``XLWINGS_ON_SERVER=true`` makes ``from xlwings import func, arg`` the Office.js decorators,
  ``custom_functions_meta(main)`` gives the registration Excel receives, ``custom_functions_call`` converts the
  Office.js arguments and calls the function. xlwings' Office.js code is licence-gated outside Lite.
- ``direct`` (no key): ``from xlwings import func, arg`` are xlwings' no-op decorators, so main.py's functions are
  called directly with the arguments xlwings' Office.js reader would hand them (see :func:`as_lite_passes`), and the
  metadata is read from the functions themselves (name, docstring, optional parameters).
"""

import importlib.util
import json
import os
import sys


def _is_jsnull(value):
    return value is None or type(value).__name__ in ("JsNull", "JsNullType") or repr(value) == "jsnull"


def _cell(value, err_to_str):
    """One Office.js cell as xlwings' Office.js reader returns it: null and "" are empty (None), an error object is
    its text (``"#N/A"``) with ``err_to_str=True`` and None without."""
    if _is_jsnull(value) or value == "":
        return None
    if isinstance(value, dict) and value.get("type") == "Error":
        return value["basicValue"] if err_to_str else None
    if isinstance(value, dict):
        return value.get("basicValue")
    return value


def as_lite_passes(value, options):
    """An Office.js argument as the function receives it under ``@arg(**options)`` (our ``ndim=2``): a 1x1 empty
    argument (or an omitted one) is ``None`` (the optional default), anything else a 2-D list."""
    assert options.get("ndim") == 2, options
    if _is_jsnull(value):
        return None
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], list) and len(value[0]) == 1:
        if _is_jsnull(value[0][0]):
            return None
    rows = value if isinstance(value, list) else [[value]]
    rows = [row if isinstance(row, list) else [row] for row in rows]
    return [[_cell(c, options.get("err_to_str", False)) for c in row] for row in rows]


def declared_arguments(source):
    """``{function: [(argument, options), ...]}`` from the ``@arg(name, **options)`` decorators of main.py."""
    import ast

    declared = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef):
            calls = [d for d in node.decorator_list if isinstance(d, ast.Call) and ast.unparse(d.func) == "arg"]
            declared[node.name] = [
                (ast.literal_eval(c.args[0]), {k.arg: ast.literal_eval(k.value) for k in c.keywords}) for c in calls
            ]
    return declared


def _top_modules():
    return {name.split(".")[0] for name in sys.modules}


async def probe(wheels, cases_js, license_key, pyodide_version):
    import micropip

    before = _top_modules()
    await micropip.install(list(wheels), deps=True)
    installed = sorted(micropip.list())
    if license_key:
        os.environ["XLWINGS_LICENSE_KEY"] = license_key
        os.environ["XLWINGS_ON_SERVER"] = "true"
    spec = importlib.util.spec_from_file_location("main", "/lite/main.py")
    main = importlib.util.module_from_spec(spec)
    sys.modules["main"] = main
    spec.loader.exec_module(main)

    import xlwings

    cases = cases_js.to_py() if hasattr(cases_js, "to_py") else cases_js
    results = {}
    if license_key:
        from xlwings.server import custom_functions_call, custom_functions_meta

        meta = custom_functions_meta(main)
        registered = [
            {
                "name": f["name"],
                "description": f["description"],
                "parameters": [[p["name"], p["description"], bool(p.get("optional"))] for p in f["parameters"]],
            }
            for f in meta["functions"]
        ]
        for case in cases:
            data = {
                "func_name": case["name"],
                "args": case["args"],
                "version": xlwings.__version__,
                "client": "Office.js",
                "runtime": "1.4",
                "culture_info_name": "en-US",
                "date_format": "m/d/yyyy",
            }
            try:
                results[case["id"]] = await custom_functions_call(data, main)
            except Exception as exc:  # noqa: BLE001  (reported, compared, never hidden)
                results[case["id"]] = f"EXCEPTION {type(exc).__name__}: {exc}"
        mode = "xlwings"
    else:
        import inspect

        with open("/lite/main.py", encoding="utf-8") as f:
            declared = declared_arguments(f.read())
        registered = []
        for name, obj in vars(main).items():
            if inspect.isfunction(obj) and obj.__module__ == "main" and not name.startswith("_"):
                params = list(inspect.signature(obj).parameters.values())
                docs = dict(declared.get(name, []))
                registered.append(
                    {
                        "name": name,
                        "description": obj.__doc__,
                        "parameters": [[p.name, docs.get(p.name, {}).get("doc"), p.default is None] for p in params],
                        "options": [[n, {k: v for k, v in o.items() if k != "doc"}] for n, o in declared.get(name, [])],
                    }
                )
        for case in cases:
            options = [o for _, o in declared[case["name"]]]
            try:
                args = [as_lite_passes(a, o) for a, o in zip(case["args"], options)]
                results[case["id"]] = getattr(main, case["name"])(*args)
            except Exception as exc:  # noqa: BLE001
                results[case["id"]] = f"EXCEPTION {type(exc).__name__}: {exc}"
        mode = "direct"
    return json.dumps(
        {
            "mode": mode,
            "python": sys.version.split()[0],
            "pyodide": pyodide_version,
            "platform": sys.platform,
            "xlwings": xlwings.__version__,
            "micropip_list": installed,
            "imported_by_install_and_main": sorted(_top_modules() - before),
            "modules": sorted(_top_modules()),
            "registered": registered,
            "results": results,
        }
    )
