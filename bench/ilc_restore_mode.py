"""ILC-TCP's RESTORE, two readings of seed 002 Figure 6 ("retransmit the first
unacknowledged segment; henceafter follow the normal TCP behavior"): go-back-N from the
first unacknowledged segment with the frozen window (our default) or that one segment
alone. Prints the mean improvement over standard TCP for experiments 4 and 5 (10 seeds).

    .venv/bin/python bench/ilc_restore_mode.py
"""

from __future__ import annotations

from pathlib import Path

from hetpath import sweep as sweep_mod
from hetpath.stats import mean_ci95

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios" / "ilc-tcp"


def main() -> None:
    for mode in ("go-back-n", "first-segment"):
        specs = sweep_mod.load_experiments(SCENARIOS / "experiments.toml")
        for name in ("exp4", "exp5"):
            spec = specs[name]
            sweep_mod.set_key(spec.base, "tcp.ilc_restore", mode)
            spec.protocols = {p: v for p, v in spec.protocols.items() if p.startswith(("tcp/", "ilc-tcp2/"))}
            raw = sweep_mod.run(sweep_mod.plan(spec))
            raw[["variant", "base"]] = raw["protocol"].str.split("/", n=1, expand=True)
            key = ["disconnections", "base", "seed"]
            ref = raw[raw.variant == "tcp"][key + ["completion_s"]].rename(columns={"completion_s": "t_tcp"})
            ilc = raw[raw.variant == "ilc-tcp2"].merge(ref, on=key)
            ilc["gain"] = (ilc.t_tcp - ilc.completion_s) / ilc.t_tcp * 100
            for (n, base), g in ilc.groupby(["disconnections", "base"]):
                mean, ci, _ = mean_ci95(g["gain"])
                print(f"{mode:13} {name} disconnections={n} {base:5} improvement {mean:6.1f} ± {ci:4.1f} %")


if __name__ == "__main__":
    main()
