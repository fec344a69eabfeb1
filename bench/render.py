#!/usr/bin/env python3
"""Render docs/BENCHMARKS.md and its plots from the results in bench/results/*.csv.

    python3 bench/render.py                 the page and the plots (docs/img/bench_*.png)
    python3 bench/render.py --no-plots      the page only (python3's standard library only)
    python3 bench/render.py --check         fail (exit 1, with a diff) if docs/BENCHMARKS.md is
                                            not what the results render to; writes nothing
    python3 bench/render.py --add-spmv OUT.md [--cisolve ROLE=KERNEL ...]
                                            take one run of `spmv_bench --md OUT.md` into
                                            bench/results/spmv.csv, in place of the rows of the
                                            same device and matrix, then render

The page's prose is bench/benchmarks.md.in; each line `@NAME@` there is replaced by the table
or list that render_NAME below makes from the CSV files (bench/results/README.md describes
their columns). Values are copied from the CSV files as written, never reformatted; the only
numbers computed here are ratios of two values of one run, printed with three decimals.
The same results always give the same page. The plots need matplotlib, which is not part of
cisolve's build or tests: `python3 -m pip install matplotlib` (add `--break-system-packages`
for a system python3 that refuses, or use a virtual environment).
"""
import argparse
import csv
import difflib
import os
import time
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "bench", "results")
TEMPLATE = os.path.join(ROOT, "bench", "benchmarks.md.in")
PAGE = os.path.join(ROOT, "docs", "BENCHMARKS.md")
IMG = os.path.join(ROOT, "docs", "img")
DEVICES = ("H100", "H200", "CPU")  # the order of every table and plot

SPMV_COLUMNS = ["device", "gpu", "commit", "date", "command", "matrix", "rows", "nnz",
                "copy_gbs", "kernel", "format", "bytes_mb", "median_ms", "ms_per_vector", "gbs",
                "pct_copy", "vs_best_cusparse", "rel_err", "cisolve"]
ROLES = ("k1", "k4", "k8", "read")  # the values of spmv.csv's column `cisolve`


def load(name):
    with open(os.path.join(RESULTS, name), newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def device_order(rows):
    """Rows sorted by device (DEVICES first, in that order), keeping the file's order within."""
    rank = {d: i for i, d in enumerate(DEVICES)}
    return sorted(rows, key=lambda r: rank.get(r["device"], len(DEVICES)))


def table(head, rows):
    out = ["| " + " | ".join(h for h, _ in head) + " |",
           "|" + "|".join("---:" if right else "---" for _, right in head) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def ratio(a, b):
    return "%.3f" % (float(a) / float(b)) if a and b else ""


def runs_list(rows):
    """One line per run (device, machine, commit, command, note) of the rows, in their order;
    runs that differ only in their start minute are one line with the range of times."""
    order, dates = [], {}
    for r in rows:
        where = r.get("gpu") or r.get("host") or ""
        key = (r["device"], where, r["commit"], r["command"], r.get("note") or "")
        if key not in dates:
            order.append(key)
            dates[key] = []
        if r["date"] not in dates[key]:
            dates[key].append(r["date"])
    out = []
    for dev, where, commit, command, note in order:
        ds = sorted(dates[(dev, where, commit, command, note)])
        if len(ds) == 1:
            when = ds[0]
        elif ds[0][:10] == ds[-1][:10]:  # one day: "2026-11-27 16:23-16:24 UTC"
            when = "%s-%s" % (ds[0][:-4], ds[-1][11:])
        else:
            when = "%s to %s" % (ds[0], ds[-1])
        out.append("- %s%s, commit %s, %s: %s%s" % (
            dev, ": " + where if where and where != dev else "", commit, when,
            "`%s`" % command if command else "command not recorded",
            " (%s)" % note if note else ""))
    return out


# ---- kernels -------------------------------------------------------------------------------

def spmv_runs():
    """{(device, matrix): {"rows": [...], "roles": {role: row}, "cusparse": row}}"""
    runs = {}
    for r in load("spmv.csv"):
        run = runs.setdefault((r["device"], r["matrix"]), {"rows": [], "roles": {}})
        run["rows"].append(r)
        if r["cisolve"]:
            run["roles"][r["cisolve"]] = r
    for run in runs.values():
        sp = [r for r in run["rows"] if r["kernel"] in ("cuSPARSE CSR ALG1", "cuSPARSE CSR ALG2")]
        run["cusparse"] = min(sp, key=lambda r: float(r["median_ms"])) if sp else None
        run["paper"] = next((r for r in run["rows"] if r["kernel"] == "paper, Algorithm 7"), None)
    return runs


def spmv_for(device):
    runs = spmv_runs()
    keys = sorted((k for k in runs if k[0] == device),
                  key=lambda k: (int(runs[k]["rows"][0]["rows"] or 0), k[1]))
    return [runs[k] for k in keys]


def matrix_name(title):
    t = title.split(",")[0]
    names = {"32768 rows": "the paper's matrix, 32K rows", "1048576 rows": "the 1M-row matrix",
             "h2o_631g_cisdt.fcidump": "H2O/6-31G CISDT", "h2o_631g_c1.fcidump": "H2O/6-31G FCI"}
    return names.get(t, t)


SHORT = {"the paper's matrix, 32K rows": "paper's\n32K rows", "the 1M-row matrix": "1M rows",
         "H2O/6-31G CISDT": "H2O\nCISDT", "H2O/6-31G FCI": "H2O\nFCI"}


def render_spmv(device):
    out = []
    body = []
    runs = spmv_for(device)
    for run in runs:
        k1, k4, k8 = (run["roles"].get(k) for k in ("k1", "k4", "k8"))
        rd, sp, pa = run["roles"].get("read"), run["cusparse"], run["paper"]
        first = run["rows"][0]
        body.append([
            matrix_name(first["matrix"]), first["rows"], first["nnz"],
            "%s (%s)" % (k1["kernel"], k1["format"]) if k1 else "",
            k1["median_ms"] if k1 else "",
            "%s %s" % (sp["kernel"].replace("cuSPARSE CSR ", ""), sp["median_ms"]) if sp else "",
            "**%s**" % k1["vs_best_cusparse"] if k1 else "",
            k1["pct_copy"] if k1 else "", rd["pct_copy"] if rd else "",
            ratio(k4["ms_per_vector"], k1["ms_per_vector"]) if k4 and k1 else "",
            ratio(k8["ms_per_vector"], k1["ms_per_vector"]) if k8 and k1 else "",
            pa["vs_best_cusparse"] if pa else ""])
    if not body:
        return ["No runs on this device yet."]
    out += table([("matrix", 0), ("rows", 1), ("nonzeros", 1), ("cisolve's product (format)", 0),
                  ("ms", 1), ("best cuSPARSE, ms", 1), ("vs best cuSPARSE", 1),
                  ("% of copy", 1), ("our bytes read alone, % of copy", 1),
                  ("k = 4, a vector / one", 1), ("k = 8, a vector / one", 1),
                  ("paper's Algorithm 7 vs best cuSPARSE", 1)], body)
    out += ["", "Runs (copy bandwidth of each run: %s GB/s):" % ", ".join(
        sorted({r["rows"][0]["copy_gbs"] for r in runs})), ""]
    out += runs_list([r["rows"][0] for r in runs])
    return out


def render_spmv_h100():
    return render_spmv("H100")


def render_spmv_h200():
    return render_spmv("H200")


def render_spmv_layouts():
    """Each layout's single product against the best cuSPARSE, one line per matrix."""
    variants = ("multi-vector", "k=8", "timed again", "dirty", "row order", "barrier",
                "8 lanes per row", "32 lanes per row", "warps per", "threads per block")
    out = []
    for device in DEVICES:
        for run in spmv_for(device):
            cells = ["%s %s" % (r["kernel"], r["vs_best_cusparse"]) for r in run["rows"]
                     if not r["kernel"].startswith(("cuSPARSE", "reading"))
                     and not any(v in r["kernel"] for v in variants)]
            out.append("- %s, %s: %s." % (device, matrix_name(run["rows"][0]["matrix"]),
                                          "; ".join(cells)))
    return out


# ---- end to end ----------------------------------------------------------------------------

def render_e2e():
    rows = device_order(load("e2e.csv"))
    body = []
    for r in rows:
        body.append([r["device"], r["case"], r["roots"], r["program"], r["time_to_solution_s"],
                     r["build_s"], r["upload_s"], r["products"], r["matvec_s"], r["ortho_s"],
                     r["other_s"], r["wall_s"]])
    out = table([("device", 0), ("case", 0), ("roots", 1), ("program", 0),
                 ("time to solution (s)", 1), ("build", 1), ("upload", 1), ("products", 0),
                 ("matvec", 1), ("ortho", 1), ("other", 1), ("process wall (s)", 1)], body)
    out += ["", "Against PySCF in the same run (time to solution):", ""]
    groups = {}
    for r in rows:
        groups.setdefault((r["device"], r["commit"], r["date"], r["roots"]), []).append(r)
    for (dev, commit, date, roots), g in groups.items():
        py = next((r for r in g if r["program"].startswith("PySCF")), None)
        for r in g:
            if py and r is not py and r["time_to_solution_s"]:
                out.append("- %s, %s root%s, %s: %s s against %s s, PySCF / cisolve = %s" % (
                    dev, roots, "" if roots == "1" else "s", r["program"],
                    r["time_to_solution_s"], py["time_to_solution_s"],
                    ratio(py["time_to_solution_s"], r["time_to_solution_s"])))
    out += ["", "Runs:", ""] + runs_list(rows)
    return out


# ---- the rest ------------------------------------------------------------------------------

def render_multivec():
    rows = load("multivec.csv")
    layouts = []
    for r in rows:
        if r["layout"] not in layouts:
            layouts.append(r["layout"])
    mats = []
    for r in rows:
        if (r["device"], r["matrix"]) not in mats:
            mats.append((r["device"], r["matrix"]))
    body = []
    for dev, m in mats:
        cells = {r["layout"]: r for r in rows if r["device"] == dev and r["matrix"] == m}
        first = next(iter(cells.values()))
        line = [dev, m, first["x8_mb"]]
        for lay in layouts:
            c = cells.get(lay)
            if not c:
                line.append("")
                continue
            one, two = c["one_pass_ms"], c["two_passes_ms"]
            if float(one) < float(two):
                one = "**%s**" % one
            else:
                two = "**%s**" % two
            line.append("%s / %s" % (one, two))
        body.append(line)
    out = table([("device", 0), ("matrix", 0), ("X's 8 columns (MB)", 1)] +
                [(lay + ": one pass / two", 1) for lay in layouts], body)
    return out + ["", "Runs:", ""] + runs_list(rows)


def render_rowgen():
    rows = load("rowgen.csv")
    body = [[r["host"], r["threads"], r["elements"], r["seconds"], r["elements_per_s"],
             r["per_core"], r["efficiency"]] for r in rows]
    out = table([("host", 0), ("threads", 1), ("elements", 1), ("seconds", 1),
                 ("elements/s", 1), ("elements/s per core", 1), ("efficiency", 1)], body)
    return out + ["", "Runs:", ""] + runs_list(rows)


def render_casscf():
    rows = device_order(load("casscf.csv"))
    body = [[r["device"], r["case"], r["side"], r["backend"], r["energy"], r["macro"],
             r["median_macro_s"], r["total_s"]] for r in rows]
    out = table([("device", 0), ("case", 0), ("FCI solver", 0), ("on", 0), ("energy (Eh)", 1),
                 ("macro-iterations", 1), ("a macro-iteration (s, median)", 1),
                 ("total (s)", 1)], body)
    for dev, case in sorted({(r["device"], r["case"]) for r in rows}):
        p = [r for r in rows if (r["device"], r["case"]) == (dev, case) and
             r["side"].startswith("PySCF")]
        c = [r for r in rows if (r["device"], r["case"]) == (dev, case) and
             r["side"].startswith("cisolve")]
        if p and c:
            out += ["", "%s, %s: PySCF's time over cisolve's, in all %s, a macro-iteration %s."
                    % (dev, case, ratio(p[0]["total_s"], c[0]["total_s"]),
                       ratio(p[0]["median_macro_s"], c[0]["median_macro_s"]))]
    return out + ["", "Runs:", ""] + runs_list(rows)


def render_rdm():
    rows = device_order(load("rdm.csv"))
    body = [[r["device"], r["case"], r["side"], r["threads"], r["seconds"], r["max_diff"]]
            for r in rows]
    out = table([("device", 0), ("vector", 0), ("computed by", 0), ("threads", 1),
                 ("seconds (best of 3)", 1), ("largest difference", 1)], body)
    return out + ["", "Runs:", ""] + runs_list(rows)


def render_irrep():
    rows = device_order(load("irrep.csv"))
    body = [[r["device"], r["case"], r["side"], r["backend"], r["ndet"], r["energy"],
             r["seconds"]] for r in rows]
    out = table([("device", 0), ("case", 0), ("solver", 0), ("on", 0), ("determinants", 1),
                 ("energy (Eh)", 1), ("seconds", 1)], body)
    return out + ["", "Runs:", ""] + runs_list(rows)


def one_rank_product(rows, r):
    """The mean product of one rank for r's machine and case: of r's commit where it has one."""
    ones = [x for x in rows if x["host"] == r["host"] and x["case"] == r["case"]
            and x["ranks"] == "1"]
    same = [x for x in ones if x["commit"] == r["commit"]] or ones
    return sum(float(x["product_ms"]) for x in same) / len(same) if same else None


def render_mpi():
    rows = device_order(load("mpi.csv"))
    body = []
    for r in rows:
        one = one_rank_product(rows, r)
        vs = "%.2fx" % (one / float(r["product_ms"])) if one and r["ranks"] != "1" else ""
        body.append([r["device"], r["case"], r["ndet"], r["ranks"], r["start"], r["threads"],
                     r["total_s"], r["build_s"], r["upload_s"], r["product_ms"], vs,
                     r["gather_ms"], r["energy"]])
    out = table([("device", 0), ("case", 0), ("determinants", 1), ("ranks", 1), ("run", 0),
                 ("threads a rank", 1), ("to solution (s)", 1), ("build (s)", 1),
                 ("upload (s)", 1), ("product (ms)", 1), ("product vs 1 rank", 1),
                 ("gather (ms)", 1), ("energy (Eh)", 1)], body)
    return out + ["", "Runs:", ""] + runs_list(rows)


# The lanes a row cisolve's products use (hamiltonian/rowgen_cuda.cu, CIS_ROWGEN_CUDA_LANES).
ROWGEN_GPU_LANES = "4"


def render_rowgen_gpu():
    """One line per device and input: cisolve's lanes (k = 1 and 8), the other widths (k = 1),
    and the host's threads measured in the same run."""
    rows = device_order(load("rowgen_gpu.csv"))
    cases = []
    for r in rows:
        key = (r["device"], r["input"])
        if key not in cases:
            cases.append(key)
    body = []
    for dev, inp in cases:
        mine = [r for r in rows if (r["device"], r["input"]) == (dev, inp)]
        gpu = [r for r in mine if r["where"] == "gpu"]
        host = next(r for r in mine if r["where"].startswith("host"))
        chosen = [r for r in gpu if r["lanes"] == ROWGEN_GPU_LANES]
        c1 = next(r for r in chosen if r["k"] == "1")
        c8 = next(r for r in chosen if r["k"] == "8")
        others = ", ".join("%s: %.2g" % (r["lanes"], float(r["elements_per_s"]))
                           for r in gpu if r["k"] == "1" and r not in chosen)
        hr = float(host["elements_per_s"])
        body.append([dev, os.path.basename(inp), c1["determinants"], "%.3g" % float(c1["entries"]),
                     c1["lanes"], "%.1f" % (1e3 * float(c1["seconds"])),
                     "%.3g" % float(c1["elements_per_s"]), "%.3g" % float(c8["elements_per_s"]),
                     others, "%.3g" % hr, "%.0fx" % (float(c1["elements_per_s"]) / hr)])
    out = table([("device", 0), ("input", 0), ("determinants", 1), ("entries", 1),
                 ("lanes a row", 1), ("a product (ms)", 1), ("entries/s", 1),
                 ("entries/s, k = 8", 1), ("other lanes a row, k = 1", 0),
                 ("host's 16 threads", 1), ("GPU vs host", 1)], body)
    return out + ["", "Runs:", ""] + runs_list(rows)


def nearest_pyscf(rows, r, field):
    """PySCF's `field` for r's device and case from the PySCF run nearest r in time (the same
    machine where the notes say so), or None."""
    when = lambda x: time.mktime(time.strptime(x["date"], "%Y-%m-%d %H:%M UTC"))
    ps = [x for x in rows if x["program"].startswith("PySCF") and x[field]
          and (x["device"], x["case"]) == (r["device"], r["case"])]
    return float(min(ps, key=lambda x: abs(when(x) - when(r)))[field]) if ps else None


def render_matrix_free():
    rows = device_order(load("matrix_free.csv"))
    body = []
    for r in rows:
        mine = not r["program"].startswith("PySCF")
        p = nearest_pyscf(rows, r, "time_to_solution_s")
        q = nearest_pyscf(rows, r, "product_ms")
        body.append([r["device"], r["case"], r["program"], r["run"] or "-",
                     r["time_to_solution_s"] or "-", r["wall_s"] or "-", r["build_s"] or "-",
                     r["upload_s"] or "-", r["product_ms"],
                     "%.1fx" % (q / float(r["product_ms"])) if mine and q else "",
                     "%.1fx" % (p / float(r["time_to_solution_s"])) if mine and p else "",
                     r["energy"] or "-"])
    out = table([("device", 0), ("case", 0), ("program", 0), ("run", 0),
                 ("to solution (s)", 1), ("process wall (s)", 1), ("build (s)", 1),
                 ("upload (s)", 1), ("product (ms)", 1), ("product vs PySCF's", 1),
                 ("to solution vs PySCF", 1), ("energy (Eh)", 1)], body)
    return out + ["", "Runs:", ""] + runs_list(rows)


def render_plots():
    return ["![Speed-up of cisolve's product over the best cuSPARSE CSR product, by matrix size]"
            "(img/bench_spmv_speedup.png)",
            "",
            "![Bandwidth of cisolve's product and of the best cuSPARSE product, as a share of "
            "the copy bandwidth](img/bench_spmv_bandwidth.png)"]


def render_page():
    with open(TEMPLATE, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out = []
    for line in lines:
        m = re.fullmatch(r"@(\w+)@", line)
        out += globals()["render_" + m.group(1)]() if m else [line]
    return "\n".join(out)


# ---- plots (matplotlib) ----------------------------------------------------------------------

def write_plots():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams.update({"font.size": 9})
    colors = {"H100": "tab:blue", "H200": "tab:orange", "CPU": "tab:green"}
    meta = {"Software": None}

    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    names = {}
    for dev in ("H100", "H200"):
        pts = [(int(r["rows"][0]["nnz"]), float(r["roles"]["k1"]["vs_best_cusparse"].rstrip("x")),
                matrix_name(r["rows"][0]["matrix"])) for r in spmv_for(dev) if "k1" in r["roles"]]
        pts.sort()
        if not pts:
            continue
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=colors[dev], label=dev)
        for x, y, name in pts:
            names[name] = (x, max(y, names.get(name, (x, 0))[1]))
    for i, (name, (x, y)) in enumerate(sorted(names.items(), key=lambda t: t[1][0])):
        ax.annotate(name, (x, y), textcoords="offset points", xytext=(-10, 8 + 10 * (i % 2)),
                    fontsize=7, ha="right" if x > 5e8 else "left")
    ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    ax.set_xscale("log")
    ax.set_ylim(0.9, 2.1)
    ax.set_xlabel("nonzeros of the matrix")
    ax.set_ylabel("speed-up over the best cuSPARSE CSR")
    ax.set_title("One product: cisolve's layout against cuSPARSE")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(os.path.join(IMG, "bench_spmv_speedup.png"), dpi=110, metadata=meta)
    plt.close(fig)

    fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.4), sharey=True)
    for ax, dev in zip(axes, ("H100", "H200")):
        runs = spmv_for(dev)
        names = [matrix_name(r["rows"][0]["matrix"]) for r in runs]
        names = [SHORT.get(n, n) for n in names]
        series = [("cisolve's product", lambda r: r["roles"].get("k1")),
                  ("best cuSPARSE", lambda r: r["cusparse"]),
                  ("our bytes read alone", lambda r: r["roles"].get("read"))]
        for i, (label, pick) in enumerate(series):
            vals = [float(pick(r)["pct_copy"].rstrip("%")) if pick(r) else 0 for r in runs]
            ax.bar([j + (i - 1) * 0.27 for j in range(len(runs))], vals, 0.27, label=label)
        ax.axhline(85, color="grey", lw=0.8, ls="--")
        ax.set_xticks(range(len(runs)))
        ax.set_xticklabels(names, fontsize=7)
        ax.set_title(dev)
    axes[0].set_ylabel("% of copy bandwidth")
    axes[0].set_ylim(0, 125)
    axes[1].legend(fontsize=6, ncol=3, loc="upper center")
    fig.tight_layout()
    fig.savefig(os.path.join(IMG, "bench_spmv_bandwidth.png"), dpi=110, metadata=meta)
    plt.close(fig)

    parts = [("build", "build_s"), ("upload", "upload_s"), ("products", "matvec_s"),
             ("orthogonalisation", "ortho_s"), ("other", "other_s")]
    e2e = [r for r in device_order(load("e2e.csv")) if not r["run"]]
    fig, axes = plt.subplots(2, 1, figsize=(7.0, 4.2))
    for ax, roots in zip(axes, ("1", "8")):
        rows = [r for r in e2e if r["roots"] == roots and r["program"].startswith("cisolve")
                and all(r[c] for _, c in parts)]
        left = [0.0] * len(rows)
        for i, (name, col) in enumerate(parts):
            vals = [float(r[col]) for r in rows]
            ax.barh(range(len(rows)), vals, left=left, label=name, color="C%d" % i)
            left = [a + b for a, b in zip(left, vals)]
        for i, r in enumerate(rows):
            py = next((p for p in e2e if p["program"].startswith("PySCF") and p["roots"] == roots
                       and (p["device"], p["commit"]) == (r["device"], r["commit"])), None)
            if py:
                ax.annotate("PySCF %s s" % py["time_to_solution_s"], (left[i], i),
                            textcoords="offset points", xytext=(4, -3), fontsize=7)
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels(["%s, %s" % (r["device"], r["program"].replace("cisolve ", ""))
                            for r in rows], fontsize=7)
        ax.invert_yaxis()
        ax.set_xlim(0, max(left) * 1.25 if left else 1)
        ax.set_title("H2O/6-31G FCI, %s root%s" % (roots, "" if roots == "1" else "s"),
                     fontsize=8)
    axes[1].set_xlabel("seconds (the report's timings)")
    axes[0].legend(fontsize=7, ncol=5, loc="lower center", bbox_to_anchor=(0.5, 1.15))
    fig.tight_layout()
    fig.savefig(os.path.join(IMG, "bench_e2e_split.png"), dpi=110, metadata=meta)
    plt.close(fig)


# ---- taking in a run of spmv_bench -----------------------------------------------------------

def parse_spmv_md(text):
    """The runs in a markdown file written by `spmv_bench --md` (or copied from one)."""
    out, cur = [], None
    for line in text.split("\n"):
        m = re.match(r"#+ (?:H[0-9]+: )?(.*)$", line)
        if m:
            cur = {"matrix": m.group(1).strip()}
            continue
        if cur is None:
            continue
        m = re.match(r"Device: (.*)\. Commit (\S+)\. (\d{4}-\d\d-\d\d \d\d:\d\d UTC)\.$", line)
        if m:
            cur["gpu"], cur["commit"], cur["date"] = m.groups()
            name = cur["gpu"]
            cur["device"] = next((d for d in ("H100", "H200") if d in name), name.split(" (")[0])
        m = re.match(r"Command: `(.*)`$", line)
        if m:
            cur["command"] = m.group(1)
        m = re.match(r"Matrix: (\d+) nonzeros", line)
        if m:
            cur["nnz"] = m.group(1)
            cur["copy_gbs"] = re.search(r"read \+ write\): (\d+) GB/s", line).group(1)
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 9 and cells[0] not in ("kernel",) and \
                not cells[0].startswith("---") and "commit" in cur:
            rows = re.search(r"(\d+) (?:rows|determinants)", cur["matrix"])
            out.append(dict(zip(SPMV_COLUMNS, [
                cur["device"], cur["gpu"], cur["commit"], cur["date"], cur["command"],
                cur["matrix"], rows.group(1) if rows else "", cur["nnz"], cur["copy_gbs"]] +
                cells + [""])))
    return out


def add_spmv(path, marks):
    with open(path, encoding="utf-8") as f:
        new = parse_spmv_md(f.read())
    runs = {(r["device"], r["matrix"]) for r in new}
    if len(runs) != 1:
        sys.exit("render.py: %s: %s run of spmv_bench (a heading, a `Device:` line and a table of "
                 "9 columns), expected one" % (path, len(runs) or "no"))
    for mark in marks:
        role, _, kernel = mark.partition("=")
        if role not in ROLES:
            sys.exit("render.py: --cisolve %s: the role is one of %s" % (mark, ", ".join(ROLES)))
        hit = [r for r in new if r["kernel"] == kernel]
        if not hit:
            sys.exit("render.py: --cisolve %s: no row of %s is named %r" % (mark, path, kernel))
        hit[0]["cisolve"] = role
    rows = [r for r in load("spmv.csv") if (r["device"], r["matrix"]) not in runs] + new
    rank = {d: i for i, d in enumerate(DEVICES)}
    rows.sort(key=lambda r: (rank.get(r["device"], len(DEVICES)), r["device"], int(r["rows"] or 0),
                             r["matrix"]))
    with open(os.path.join(RESULTS, "spmv.csv"), "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, SPMV_COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print("render.py: %d rows of %s in bench/results/spmv.csv" % (len(new), path))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="compare, write nothing")
    ap.add_argument("--no-plots", action="store_true", help="write the page only")
    ap.add_argument("--add-spmv", metavar="OUT.md", help="a run of spmv_bench --md to take in")
    ap.add_argument("--cisolve", action="append", default=[], metavar="ROLE=KERNEL",
                    help="with --add-spmv: the row cisolve runs, ROLE one of " + ", ".join(ROLES))
    a = ap.parse_args()
    if a.add_spmv:
        add_spmv(a.add_spmv, a.cisolve)
    page = render_page()
    if a.check:
        with open(PAGE, encoding="utf-8") as f:
            have = f.read()
        if have != page:
            sys.stdout.writelines(difflib.unified_diff(
                have.splitlines(True), page.splitlines(True), "docs/BENCHMARKS.md",
                "rendered from bench/results"))
            sys.exit("render.py: docs/BENCHMARKS.md is not what bench/results renders to: run "
                     "python3 bench/render.py (and commit both)")
        return
    with open(PAGE, "w", encoding="utf-8") as f:
        f.write(page)
    if not a.no_plots:
        write_plots()


if __name__ == "__main__":
    main()
