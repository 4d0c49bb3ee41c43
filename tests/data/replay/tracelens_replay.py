"""Replay with TraceLens's EventReplay every argument set of a replay IR (`tracesql replay DATASET --out DIR`):
for each entry, the event TraceLens reads (the op name and the recorded 'Input Dims', 'Input type', 'Input
Strides', 'Concrete Inputs', each left out when the trace did not record it), built and called on the CPU as its
EventReplayer does. Writes one TSV row per entry: trace, rank, op_name, status (ok / failed), reason (the
exception's first line), and ir: the values of TraceLens's replay IR in argument order as JSON (a tensor as
[shape, recorded type, strides]), empty when it could not build one.

    python tracelens_replay.py DIR/replay_ir.json OUT.tsv

Needs TraceLens and torch in the running Python (see README.md for the versions the checked-in TSV was made with).
"""
import csv
import json
import sys
import warnings


def main(ir_path: str, out_path: str) -> None:
    from TraceLens import EventReplayer

    entries = json.load(open(ir_path))["entries"]
    with open(out_path, "w", newline="") as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        w.writerow(["trace", "rank", "op_name", "status", "reason", "ir"])
        for e in entries:
            rec = e["recorded"]
            args = {k: v for k, v in (("Input Dims", rec["dims"]), ("Input type", rec["types"]),
                                      ("Input Strides", rec["strides"]), ("Concrete Inputs", rec["concrete"]))
                    if v is not None}
            event = {"name": e["op_name"], "args": args}
            ir = ""
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    r = EventReplayer(event, device="cpu", lazy=True)
                    ir = json.dumps([_value(a["value"]) for a in r.event_replay_IR["list_pos_args"]
                                     + r.event_replay_IR["list_kwargs"]])
                    r.replay()
                status, reason = "ok", ""
            except Exception as err:  # noqa: BLE001 - every failure is the row's result
                text = str(err).strip()
                status, reason = "failed", f"{type(err).__name__}: {text.splitlines()[0] if text else ''}"[:300]
            w.writerow([e["trace"], e["rank"], e["op_name"], status, reason, ir])


def _value(v):
    if hasattr(v, "shape") and hasattr(v, "strides"):  # TraceLens's TensorCfg
        return [v.shape, v.dtype, v.strides]
    return v


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
