#!/usr/bin/python3
"""Generate ONNX's backend *node* test cases from Debian's python3-onnx.

Usage: /usr/bin/python3 tests/onnx/generate.py [DIR]     (default build/onnx-node-tests)

Layout written:
    DIR/<case_name>/model.onnx
    DIR/<case_name>/test_data_set_0/input_K.pb, output_K.pb
    DIR/.stamp   (written last; when it matches, re-running does nothing)

Only the node cases are produced (not the real/simple/pytorch model cases).
The reference data comes from onnx.backend.test.case.node: importing its
modules runs every operator's export functions, each of which calls expect()
and registers a TestCase holding the model and its input/output arrays.
"""

import hashlib
import os
import shutil
import sys
import warnings

import numpy as np

# onnx 1.12's case generators still use aliases removed in numpy 1.24.
for _alias, _value in (("float", float), ("int", int), ("bool", bool),
                       ("object", object), ("str", str), ("complex", complex)):
    if _alias not in np.__dict__:
        setattr(np, _alias, _value)

import onnx  # noqa: E402
from onnx import numpy_helper  # noqa: E402

REPO = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEFAULT_DIR = os.path.join(REPO, "build", "onnx-node-tests")
STAMP = ".stamp"


def stamp_text() -> str:
    with open(os.path.realpath(__file__), "rb") as f:
        script_hash = hashlib.sha256(f.read()).hexdigest()[:16]
    return f"onnx={onnx.__version__} numpy={np.__version__} generator={script_hash}\n"


def read_stamp(out_dir: str):
    """Return (header, count) of an existing stamp, or (None, None)."""
    try:
        with open(os.path.join(out_dir, STAMP)) as f:
            lines = f.read().splitlines()
        return lines[0] + "\n", int(lines[1].split("=", 1)[1])
    except (OSError, IndexError, ValueError):
        return None, None


def serialize_value(value, value_info: onnx.ValueInfoProto) -> bytes:
    """Encode one input/output value according to its graph declaration."""
    t = value_info.type
    if t.HasField("sequence_type"):
        proto = numpy_helper.from_list(value, value_info.name)
    elif t.HasField("optional_type"):
        proto = numpy_helper.from_optional(value, value_info.name)
    elif t.HasField("map_type"):
        proto = numpy_helper.from_dict(value, value_info.name)
    else:
        proto = numpy_helper.from_array(np.asarray(value), value_info.name)
    return proto.SerializeToString()


def write_case(case, case_dir: str) -> None:
    os.makedirs(case_dir)
    with open(os.path.join(case_dir, "model.onnx"), "wb") as f:
        f.write(case.model.SerializeToString())
    graph = case.model.graph
    for k, (inputs, outputs) in enumerate(case.data_sets):
        ds_dir = os.path.join(case_dir, f"test_data_set_{k}")
        os.makedirs(ds_dir)
        for j, value in enumerate(inputs):
            with open(os.path.join(ds_dir, f"input_{j}.pb"), "wb") as f:
                f.write(serialize_value(value, graph.input[j]))
        for j, value in enumerate(outputs):
            with open(os.path.join(ds_dir, f"output_{j}.pb"), "wb") as f:
                f.write(serialize_value(value, graph.output[j]))


def collect_node_cases():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import onnx.backend.test.case.node as node_cases
        return list(node_cases.collect_testcases(None))


def main(argv) -> int:
    if len(argv) > 2 or (len(argv) == 2 and argv[1] in ("-h", "--help")):
        print(__doc__.strip())
        return 0 if len(argv) == 2 else 2
    out_dir = os.path.abspath(argv[1] if len(argv) == 2 else DEFAULT_DIR)
    want = stamp_text()

    header, count = read_stamp(out_dir)
    if header == want:
        print(f"onnx node tests: {count} cases already in {out_dir} (onnx {onnx.__version__})")
        return 0
    if os.path.exists(out_dir) and header is None and os.listdir(out_dir):
        # Refuse to wipe a directory this script did not create.
        sys.stderr.write(f"generate.py: {out_dir} exists, is not empty and has no {STAMP}; "
                         "remove it or pick another directory\n")
        return 1

    cases = collect_node_cases()
    # onnx 1.12 registers two different cases under the same name twice
    # (test_reduce_sum_negative_axes_keepdims_random, test_resize_tf_crop_and_resize).
    # ONNX's own generate-data overwrites, so the last one owns the plain name;
    # keep the earlier ones too, as <name>_dupN.
    last = {c.name: i for i, c in enumerate(cases)}
    seen = {}
    for i, case in enumerate(cases):
        if last[case.name] != i:
            seen[case.name] = seen.get(case.name, 0) + 1
            case.name = f"{case.name}_dup{seen[case.name]}"
            print(f"note: duplicate case name, earlier one kept as {case.name}")
    assert len({c.name for c in cases}) == len(cases)

    tmp_dir = out_dir + ".tmp"
    shutil.rmtree(tmp_dir, ignore_errors=True)
    os.makedirs(tmp_dir)
    for case in cases:
        assert case.kind == "node" and case.model is not None and case.data_sets
        write_case(case, os.path.join(tmp_dir, case.name))
    with open(os.path.join(tmp_dir, STAMP), "w") as f:
        f.write(want + f"cases={len(cases)}\n")

    shutil.rmtree(out_dir, ignore_errors=True)
    os.rename(tmp_dir, out_dir)
    print(f"onnx node tests: generated {len(cases)} cases in {out_dir} (onnx {onnx.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
