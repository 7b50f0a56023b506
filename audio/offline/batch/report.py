"""``barkbus batch report DIR``: aggregate a batch store into CSV tables, PNG plots and one HTML page.

Tables (``DIR/report/*.csv``, every one sorted on its keys):

* ``runs.csv`` per scenario: runs, ok, failed, mean decisions and voices per run;
  ``failures.csv`` every failed run with its error.
* ``plays.csv`` per scenario, system, event and clip (what each system's
  :meth:`~audio.core.plugin.GameSystem.play_key` names: Starlancer's clip is the speech file,
  its event the script part; a play no event caused has event ""): plays (``Started``), the event's
  lines (line starts: a ``Started`` without a later ``clip_index``), expected plays from the
  systems' weights (:mod:`audio.offline.batch.shares`), observed and expected shares of the
  event's lines, and plays / expected. ``takes.csv``: plays per take.
* ``repeats.csv`` per play group (Skate: a clip, varying its take; Sylpheed: a speaker's
  event, varying its message): plays and, for k = 1..K, the share of plays whose variant is
  one of the group's previous k in the same run.
* ``refusals.csv`` per gate rule (outcome, with a one-word reason where the system gives
  one) and event; ``never_played.csv`` the lines the speakers had that no run played.
* ``loudness.csv`` (full mode): integrated loudness (LUFS), peak (dBFS), clipped samples.

Nothing depends on the number of workers or the order tasks finished in: rows are sorted
before every aggregation and wall times are left out, so the same seeds give the same bytes.
"""

from __future__ import annotations

import html
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from audio.core.outcomes import OutcomeClass
from audio.games import outcome_table
from audio.offline.batch.shares import DEFAULT_VARIETY, PLAY_CLASS
from audio.offline.batch.store import BatchStore

__all__ = [
    "load_frames",
    "loudness_table",
    "never_played_table",
    "plays_table",
    "refusals_table",
    "repeats_table",
    "runs_table",
    "write_report",
]

_TOKEN = re.compile(r"^[a-z][a-z_]*$")
_ORDER = ["scenario", "seed", "seq"]


def load_frames(root: str | Path) -> dict[str, pd.DataFrame]:
    """The store as one DataFrame per row kind (run, decision, expect, catalog), sorted."""
    t = BatchStore(root).load().to_pandas(types_mapper=None)
    out = {}
    for kind in ("run", "decision", "expect", "catalog"):
        df = t[t["kind"] == kind].drop(columns=["kind"])
        keys = [c for c in _ORDER + ["system", "event", "clip"] if c in df.columns]
        out[kind] = df.sort_values(keys, kind="stable").reset_index(drop=True)
    return out


def _detail(s: str | None) -> dict[str, Any]:
    try:
        d = json.loads(s) if s else {}
    except ValueError:
        return {}
    return d if isinstance(d, dict) else {}


def _plays(dec: pd.DataFrame) -> pd.DataFrame:
    plays = _names_of(PLAY_CLASS)
    p = dec[dec["outcome"].isin(plays) & dec["clip"].notna()].copy()
    p["event"] = p["event"].fillna("")  # a play no event caused (a Radiata script line) still counts
    starts = [int(_detail(s).get("clip_index", 0) or 0) == 0 for s in p["detail"]]
    p["line_start"] = pd.Series(starts, index=p.index, dtype=bool)  # bool even when empty
    return p


def runs_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Per scenario: runs, ok, failed, mode, mean decisions and voices of the ok runs."""
    rows = []
    for sc, g in runs.groupby("scenario", sort=True):
        ok = g[g["status"] == "ok"]
        rows.append(
            {
                "scenario": sc,
                "mode": ",".join(sorted(set(g["mode"].dropna()))),
                "runs": len(g),
                "ok": len(ok),
                "failed": int((g["status"] == "failed").sum()),
                "decisions_per_run": float(ok["decisions"].mean()) if len(ok) else math.nan,
                "voices_per_run": float(ok["voices"].mean()) if len(ok) else math.nan,
            }
        )
    return pd.DataFrame(
        rows, columns=["scenario", "mode", "runs", "ok", "failed", "decisions_per_run", "voices_per_run"]
    )


def plays_table(dec: pd.DataFrame, expect: pd.DataFrame, catalog: pd.DataFrame) -> pd.DataFrame:
    """Plays against expected plays per (scenario, system, event, clip); see the module docstring."""
    keys = ["scenario", "system", "event", "clip"]
    p = _plays(dec)
    plays = p.groupby(keys, sort=True).size().rename("plays")
    lines = p[p["line_start"]].groupby(["scenario", "system", "event"], sort=True).size().rename("lines")
    exp = expect.groupby(keys, sort=True)["value"].sum().rename("expected")
    cat = catalog[keys].drop_duplicates().assign(listed=True).set_index(keys)["listed"]
    t = pd.concat([plays, exp, cat], axis=1).reset_index()
    ek = ["scenario", "system", "event"]
    names = pd.concat([dec[[*ek, "event_name"]], expect[[*ek, "event_name"]]]).dropna().drop_duplicates(ek)
    t = t.merge(names, on=["scenario", "system", "event"], how="left")
    t = t.merge(lines.reset_index(), on=["scenario", "system", "event"], how="left")
    t["plays"] = t["plays"].fillna(0).astype("int64")
    t["lines"] = t["lines"].fillna(0).astype("int64")
    t["expected"] = t["expected"].fillna(0.0)
    t["listed"] = t["listed"].astype("boolean").fillna(False).astype(bool)
    lines_or_nan = t["lines"].where(t["lines"] > 0)
    t["share"] = t["plays"] / lines_or_nan
    t["expected_share"] = t["expected"] / lines_or_nan
    t["ratio"] = t["plays"] / t["expected"].where(t["expected"] > 0)
    cols = [
        "scenario",
        "system",
        "event",
        "event_name",
        "clip",
        "lines",
        "plays",
        "expected",
        "share",
        "expected_share",
        "ratio",
        "listed",
    ]
    return t[cols].sort_values(keys, kind="stable").reset_index(drop=True)


def takes_table(dec: pd.DataFrame) -> pd.DataFrame:
    """Plays per (scenario, system, event, clip, take)."""
    p = _plays(dec)
    p = p[p["take"].notna()]
    keys = ["scenario", "system", "event", "clip", "take"]
    t = p.groupby(keys, sort=True).size().rename("plays").reset_index()
    t["take"] = t["take"].astype("int64")
    return t


def _group_variant(p: pd.DataFrame) -> tuple[list[str], list[str]]:
    groups, variants = [], []
    cols = (p[c] for c in ("variety", "speaker", "event", "clip", "take"))
    for variety, speaker, event, clip, take in zip(*cols):
        g, v = variety.split("/", 1) if isinstance(variety, str) else DEFAULT_VARIETY
        groups.append(f"{speaker} {event}" if g == "event" else str(clip))
        variants.append(str(clip) if v == "clip" else ("" if pd.isna(take) else str(int(take))))
    return groups, variants


def repeats_table(dec: pd.DataFrame, k_max: int = 3) -> pd.DataFrame:
    """Per (scenario, system, group): plays, plays after a first, and repeats/rates within k = 1..k_max."""
    p = _plays(dec)
    groups, variants = _group_variant(p)
    seqs: dict[tuple[str, int, str, str], list[str]] = {}
    for sc, seed, system, g, v in zip(p["scenario"], p["seed"], p["system"], groups, variants):
        seqs.setdefault((sc, int(seed), system, g), []).append(v)  # rows are in (scenario, seed, seq) order
    acc: dict[tuple[str, str, str], list[int]] = {}
    for (sc, _seed, system, group), seq in sorted(seqs.items()):
        a = acc.setdefault((sc, system, group), [0, 0] + [0] * k_max)
        a[0] += len(seq)
        a[1] += max(0, len(seq) - 1)
        for j in range(1, len(seq)):
            for k in range(1, k_max + 1):
                if seq[j] in seq[max(0, j - k) : j]:
                    a[1 + k] += 1
    rows = []
    for (sc, system, group), a in sorted(acc.items()):
        row: dict[str, Any] = {
            "scenario": sc,
            "system": system,
            "group": group,
            "plays": a[0],
            "followups": a[1],
        }
        for k in range(1, k_max + 1):
            row[f"repeats_k{k}"] = a[1 + k]
            row[f"rate_k{k}"] = a[1 + k] / a[1] if a[1] else math.nan
        rows.append(row)
    cols = ["scenario", "system", "group", "plays", "followups"] + [
        c for k in range(1, k_max + 1) for c in (f"repeats_k{k}", f"rate_k{k}")
    ]
    return pd.DataFrame(rows, columns=cols)


def _category(outcome: str, reason: Any, detail: str | None) -> str:
    for v in (reason, _detail(detail).get("detail")):
        if isinstance(v, str) and _TOKEN.match(v):
            return f"{outcome}: {v}"
    return outcome


def _names_of(*kinds: OutcomeClass) -> frozenset[str]:
    """The declared outcome names of these classes (every registered game's)."""
    return frozenset(name for name, kind in outcome_table().items() if kind in kinds)


def refusals_table(dec: pd.DataFrame) -> pd.DataFrame:
    """Refusals (declared outcomes of class refused or fault) per (scenario, system, rule, event)."""
    refused = _names_of(OutcomeClass.REFUSED, OutcomeClass.FAULT)
    r = dec[dec["outcome"].isin(refused)].copy()
    r["rule"] = [_category(o, rs, d) for o, rs, d in zip(r["outcome"], r["reason"], r["detail"])]
    r["event"] = r["event"].fillna("")
    r["event_name"] = r["event_name"].fillna("")
    t = r.groupby(["scenario", "system", "rule", "event", "event_name"], sort=True).size().rename("count")
    return t.reset_index()


def never_played_table(plays: pd.DataFrame) -> pd.DataFrame:
    """Lines listed for the runs' speakers (or expected) that no run played."""
    t = plays[(plays["plays"] == 0) & (plays["listed"] | (plays["expected"] > 0))]
    return t[["scenario", "system", "event", "event_name", "clip", "expected"]].reset_index(drop=True)


def _q(a: np.ndarray, x: float) -> float:
    return float(np.quantile(a, x)) if a.size else math.nan


def loudness_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Per scenario (full-mode runs): loudness and peak percentiles, clipped runs and samples."""
    rows = []
    full = runs[(runs["status"] == "ok") & runs["loudness_lufs"].notna()]
    for sc, g in full.groupby("scenario", sort=True):
        lu = np.sort(g["loudness_lufs"].to_numpy(np.float64))
        lu = lu[np.isfinite(lu)]
        pk = np.sort(g["peak_dbfs"].to_numpy(np.float64))
        rows.append(
            {
                "scenario": sc,
                "runs": len(g),
                "lufs_min": _q(lu, 0),
                "lufs_p05": _q(lu, 0.05),
                "lufs_median": _q(lu, 0.5),
                "lufs_p95": _q(lu, 0.95),
                "lufs_max": _q(lu, 1),
                "peak_median_dbfs": _q(pk, 0.5),
                "peak_max_dbfs": _q(pk, 1),
                "clipped_runs": int((g["clipped"] > 0).sum()),
                "clipped_samples": int(g["clipped"].sum()),
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "scenario",
            "runs",
            "lufs_min",
            "lufs_p05",
            "lufs_median",
            "lufs_p95",
            "lufs_max",
            "peak_median_dbfs",
            "peak_max_dbfs",
            "clipped_runs",
            "clipped_samples",
        ],
    )


# -- output --------------------------------------------------------------------------------
def _csv(df: pd.DataFrame, path: Path) -> None:
    path.write_text(df.to_csv(index=False, float_format="%.6g", lineterminator="\n"), encoding="utf-8")


def _cell(v: Any) -> str:
    if isinstance(v, (float, np.floating)):
        return "" if math.isnan(v) else f"{v:.4g}"
    return html.escape(str(v))


def _html_table(df: pd.DataFrame, limit: int = 60) -> str:
    if df.empty:
        return "<p><i>none</i></p>"
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{_cell(v)}</td>" for v in row) + "</tr>"
        for row in df.head(limit).itertuples(index=False)
    )
    more = f"<p><i>{len(df) - limit} more rows in the CSV</i></p>" if len(df) > limit else ""
    return f"<table><tr>{head}</tr>{body}</table>{more}"


def _figure(w: float, h: float) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(w, h), dpi=100, layout="constrained")


def _save(fig: Any, path: Path) -> None:
    fig.savefig(path, format="png", metadata={"Software": None})


def plot_shares(plays: pd.DataFrame, path: Path) -> bool:
    """Observed against expected plays per clip, one panel per (scenario, system)."""
    t = plays[plays["expected"] > 0]
    panels = list(t.groupby(["scenario", "system"], sort=True))[:6]
    if not panels:
        return False
    fig = _figure(5.0 * min(len(panels), 3), 4.2 * ((len(panels) + 2) // 3))
    for i, ((sc, system), g) in enumerate(panels):
        ax = fig.add_subplot((len(panels) + 2) // 3, min(len(panels), 3), i + 1)
        hi = max(float(g["expected"].max()), float(g["plays"].max()), 1.0) * 1.3
        ax.plot([0.5, hi], [0.5, hi], color="0.6", lw=1, label="as weighted")
        ax.scatter(g["expected"].clip(lower=0.5), g["plays"].clip(lower=0.5), s=14, alpha=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("expected plays (weights)")
        ax.set_ylabel("plays")
        ax.set_title(f"{sc}: {system}", fontsize=9)
        ax.legend(fontsize=7, loc="upper left")
    _save(fig, path)
    return True


def plot_repeats(rep: pd.DataFrame, k_max: int, path: Path) -> bool:
    """Share of plays repeating one of the last k variants, per (scenario, system)."""
    if rep.empty:
        return False
    tot = rep.groupby(["scenario", "system"], sort=True)[
        ["followups"] + [f"repeats_k{k}" for k in range(1, k_max + 1)]
    ].sum()
    fig = _figure(7.0, 0.5 + 0.45 * len(tot) * k_max / 2 + 1.5)
    ax = fig.add_subplot(1, 1, 1)
    labels = [f"{sc}\n{system}" for sc, system in tot.index]
    ys = np.arange(len(tot))
    hgt = 0.8 / k_max
    for k in range(1, k_max + 1):
        rate = (tot[f"repeats_k{k}"] / tot["followups"].where(tot["followups"] > 0, np.nan)).to_numpy() * 100
        ax.barh(ys + (k - 1) * hgt, np.nan_to_num(rate), height=hgt, label=f"within last {k}")
    ax.set_yticks(ys + 0.4 - hgt / 2, labels, fontsize=8)
    ax.set_xlabel("plays repeating a recent variant (%)")
    ax.invert_yaxis()
    ax.legend(fontsize=8)
    _save(fig, path)
    return True


def plot_refusals(ref: pd.DataFrame, path: Path) -> bool:
    """Refusals per gate rule (the 20 largest), per scenario."""
    if ref.empty:
        return False
    t = ref.groupby(["scenario", "rule"], sort=True)["count"].sum().reset_index()
    t = t.sort_values(["count", "scenario", "rule"], ascending=[False, True, True], kind="stable").head(20)
    fig = _figure(7.0, 1.0 + 0.3 * len(t))
    ax = fig.add_subplot(1, 1, 1)
    ax.barh(np.arange(len(t)), t["count"].to_numpy(), color="tab:red")
    ax.set_yticks(np.arange(len(t)), [f"{a}: {b}" for a, b in zip(t["scenario"], t["rule"])], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("refusals (all runs)")
    _save(fig, path)
    return True


def plot_loudness(runs: pd.DataFrame, path: Path) -> bool:
    """Histogram of integrated loudness per scenario (full-mode runs)."""
    full = runs[(runs["status"] == "ok") & np.isfinite(runs["loudness_lufs"].astype(float))]
    if full.empty:
        return False
    fig = _figure(7.0, 3.6)
    ax = fig.add_subplot(1, 1, 1)
    lo, hi = float(full["loudness_lufs"].min()), float(full["loudness_lufs"].max())
    bins = np.linspace(math.floor(lo) - 0.5, math.ceil(hi) + 0.5, 31)
    for sc, g in full.groupby("scenario", sort=True):
        ax.hist(g["loudness_lufs"].to_numpy(float), bins=bins, alpha=0.6, label=str(sc))
    ax.set_xlabel("integrated loudness (LUFS, BS.1770)")
    ax.set_ylabel("runs")
    ax.legend(fontsize=8)
    _save(fig, path)
    return True


_CSS = (
    "body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}"
    "table{border-collapse:collapse;font-size:12px;margin:.5em 0}"
    "td,th{border:1px solid #ccc;padding:2px 6px}"
    "th{background:#eee}td{text-align:right}td:first-child,td:nth-child(2){text-align:left}"
)


def write_report(root: str | Path, out: str | Path | None = None, k_max: int = 3) -> Path:
    """Write the report of batch ``root`` into ``out`` (default ``root/report``); returns the HTML path."""
    import matplotlib

    matplotlib.use("Agg")
    f = load_frames(root)
    out = Path(out) if out is not None else Path(root) / "report"
    out.mkdir(parents=True, exist_ok=True)
    runs, dec = f["run"], f["decision"]
    tables = {
        "runs": runs_table(runs),
        "failures": runs.loc[runs["status"] == "failed", ["scenario", "seed", "error"]].reset_index(
            drop=True
        ),
        "plays": plays_table(dec, f["expect"], f["catalog"]),
        "takes": takes_table(dec),
        "repeats": repeats_table(dec, k_max),
        "refusals": refusals_table(dec),
        "loudness": loudness_table(runs),
    }
    tables["never_played"] = never_played_table(tables["plays"])
    for name, df in tables.items():
        _csv(df, out / f"{name}.csv")
    plots = {
        "shares": plot_shares(tables["plays"], out / "shares.png"),
        "repeats": plot_repeats(tables["repeats"], k_max, out / "repeats.png"),
        "refusals": plot_refusals(tables["refusals"], out / "refusals.png"),
        "loudness": plot_loudness(runs, out / "loudness.png"),
    }
    page = out / "index.html"
    page.write_text(_page(tables, plots, k_max), encoding="utf-8")
    return page


def _section(
    title: str,
    text: str,
    name: str,
    tables: dict[str, pd.DataFrame],
    plot: str | None = None,
    show: pd.DataFrame | None = None,
) -> str:
    img = f'<p><img src="{plot}.png" alt="{html.escape(title)}"></p>' if plot else ""
    return (
        f'<h2>{html.escape(title)}</h2><p>{text} <a href="{name}.csv">{name}.csv</a></p>{img}'
        + _html_table(tables[name] if show is None else show)
    )


def _page(t: dict[str, pd.DataFrame], plots: dict[str, bool], k_max: int) -> str:
    runs = t["runs"]
    plays = t["plays"]
    worst = plays[plays["expected"] >= 5].assign(dev=lambda d: (d["ratio"] - 1).abs())
    worst = worst.sort_values(
        ["dev", "scenario", "system", "event", "clip"], ascending=[False] + [True] * 4, kind="stable"
    ).drop(columns=["dev"])
    rep = t["repeats"]
    rep_show = rep[rep["followups"] >= 5].sort_values(
        ["rate_k1", "scenario", "system", "group"], ascending=[False, True, True, True], kind="stable"
    )

    def p(name: str) -> str | None:
        return name if plots.get(name) else None

    head = (
        "<!doctype html><html><head><meta charset='utf-8'><title>barkbus batch report</title>"
        f"<style>{_CSS}</style></head><body><h1>barkbus batch report</h1>"
    )
    count = (
        f"<p>{int(runs['runs'].sum())} runs ({int(runs['ok'].sum())} ok, {int(runs['failed'].sum())} "
        f"failed) of {len(runs)} scenario(s).</p>"
    )
    parts = [
        head,
        count,
        _html_table(runs),
        _section("Failed runs", "Runs that raised, with their error.", "failures", t),
        _section(
            "Plays against the weights",
            "Per event and clip: plays (clip starts), the event's "
            "lines, the plays the weights predict for those lines, and their ratio. Largest "
            "deviations "
            "first (clips with >= 5 expected plays).",
            "plays",
            t,
            p("shares"),
            worst,
        ),
        _section(
            "Take repeats",
            f"Share of plays (after a group's first in a run) repeating one of the "
            f"group's last k = 1..{k_max} variants: Skate takes of a clip, Sylpheed messages of a "
            "speaker's event. Highest first (groups with >= 5 follow-up plays).",
            "repeats",
            t,
            p("repeats"),
            rep_show,
        ),
        _section(
            "Refusals by rule",
            "Requests the gates refused, by rule (outcome) and event.",
            "refusals",
            t,
            p("refusals"),
            t["refusals"].sort_values(
                ["count", "scenario", "system", "rule", "event"],
                ascending=[False] + [True] * 4,
                kind="stable",
            ),
        ),
        _section(
            "Lines that never played",
            "Lines the runs' speakers had (or the weights expected) that no run played.",
            "never_played",
            t,
        ),
        _section(
            "Loudness",
            "Full-mode runs only: integrated loudness (ITU-R BS.1770 gating, pyloudnorm's K-weighting), "
            "sample peak and clipped samples (|x| >= 1.0).",
            "loudness",
            t,
            p("loudness"),
        ),
        '<p>Also: <a href="takes.csv">takes.csv</a> (plays per take).</p></body></html>\n',
    ]
    return "\n".join(parts)
