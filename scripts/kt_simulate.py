"""Replay a Kernel Tuner cache written by `gpucast tune --write-cache` in Kernel
Tuner's simulation mode (brute force, no GPU) and check that the best configuration
Kernel Tuner finds is the one `gpucast tune` ranks first.

Usage: kt_simulate.py PREDICTED_CACHE.json TUNE_TOP1.json
(TUNE_TOP1.json: the output of `gpucast tune --top 1 --format json` on the same runs)
"""

import json
import sys
import warnings

import kernel_tuner


def value_of(token):
    """A cache key's field as Kernel Tuner wrote it (str() of the value)."""
    for kind in (int, float):
        try:
            return kind(token)
        except ValueError:
            pass
    return token


def same_value(a, b):
    try:
        return float(a) == float(b)
    except ValueError:
        return str(a) == str(b)


def main(cache_path, first_path):
    with open(cache_path) as f:
        doc = json.load(f)
    keys = doc["tune_params_keys"]
    entries = doc["cache"]
    # The space is what the cache holds: its values per parameter, restricted to
    # the configurations it has (Kernel Tuner refuses a configuration it lacks).
    tune_params = {k: [] for k in keys}
    for key in entries:
        for k, token in zip(keys, key.split(",")):
            v = value_of(token)
            if v not in tune_params[k]:
                tune_params[k].append(v)
    present = set(entries)

    def restrict(p):
        return ",".join(str(p[k]) for k in keys) in present

    # Nothing runs in simulation mode: the stand-in kernel has no arguments and the
    # block dimensions are not named, which Kernel Tuner would warn about.
    warnings.filterwarnings("ignore", message="Kernel .* and host argument .* lists do not match")
    warnings.filterwarnings("ignore", message="None of the tunable parameters specify thread block")
    results, env = kernel_tuner.tune_kernel(
        doc["kernel_name"],
        "__global__ void %s() {}" % doc["kernel_name"],
        tuple(doc["problem_size"]),
        [],
        tune_params,
        restrictions=restrict,
        cache=cache_path,
        simulation_mode=True,
        strategy="brute_force",
        quiet=True,
    )
    timed = [r for r in results if "__error__" not in r and isinstance(r.get("time"), float)]
    best = min(timed, key=lambda r: r["time"])
    with open(first_path) as f:
        first = json.load(f)[0]
    ranked_first = dict(part.split("=", 1) for part in first["config"].split(","))
    print(f"kernel_tuner {kernel_tuner.__version__}, simulation mode, brute_force, device {env['device_name']}")
    print(f"{len(results)} configurations evaluated, {len(timed)} timed; cache {doc['predicted_by']}, model {doc['prediction_model']}, from {doc['predicted_from']}")
    print("best: " + ",".join(f"{k}={best[k]}" for k in keys) + f" time={best['time']:.6f} ms [{best['time_lo']:.6f}, {best['time_hi']:.6f}] ({best['interval']})")
    print(f"gpucast tune ranks first: {first['config']} pred_ms={first['pred_ms']}")
    agree = set(ranked_first) == set(keys) and all(same_value(best[k], ranked_first[k]) for k in keys)
    if not agree:
        print("FAIL: Kernel Tuner's best configuration is not the one gpucast tune ranks first", file=sys.stderr)
        return 1
    print("ok: Kernel Tuner's best configuration is the one gpucast tune ranks first")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
