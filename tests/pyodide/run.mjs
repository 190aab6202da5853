// Start Pyodide under Node, install wheels from local files with micropip (network refused), load the xlwings Lite
// main.py as Lite does, and run lite_probe.py. Prints one JSON object (the probe's report) on the last stdout line.
//
// usage: node run.mjs PYODIDE_DIR MICROPIP_WHEEL MAIN_PY CASES_JSON WHEEL...
// PYODIDE_DIR: node_modules/pyodide of the npm package; WHEEL...: what requirements.txt names (local files).
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const [pyodideDir, micropipWheel, mainPy, casesJson, ...wheelPaths] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));

// Offline: any network request fails the run (Pyodide would otherwise fetch packages from its CDN).
const refused = [];
globalThis.fetch = async (url) => {
  refused.push(String(url));
  throw new Error(`network refused in this test: ${url}`);
};

const { loadPyodide } = await import(pathToFileURL(path.join(pyodideDir, "pyodide.mjs")).href);
const log = (msg) => process.stderr.write(`${msg}\n`);
const pyodide = await loadPyodide({ indexURL: pyodideDir + path.sep, stdout: log, stderr: log });

// micropip is not in the npm package (Pyodide loads it from its CDN); the same wheel from the package index.
await pyodide.loadPackage(micropipWheel, { messageCallback: log, errorCallback: log });

pyodide.FS.mkdirTree("/wheels");
const wheels = wheelPaths.map((p) => path.basename(p));
wheelPaths.forEach((p, i) => pyodide.FS.writeFile(`/wheels/${wheels[i]}`, fs.readFileSync(p)));
pyodide.FS.mkdirTree("/lite");
pyodide.FS.writeFile("/lite/main.py", fs.readFileSync(mainPy));

pyodide.runPython(fs.readFileSync(path.join(here, "lite_probe.py"), "utf8"));
const report = await pyodide.globals.get("probe")(
  wheels.map((w) => `emfs:/wheels/${w}`),
  JSON.parse(fs.readFileSync(casesJson, "utf8")), // plain JS objects: nulls stay JS null, as Office.js sends them
  process.env.XLWINGS_LICENSE_KEY ?? "",
  pyodide.version,
);
const out = JSON.parse(report);
out.refused_requests = refused;
process.stdout.write(`${JSON.stringify(out)}\n`);
