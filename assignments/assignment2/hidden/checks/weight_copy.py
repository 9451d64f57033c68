"""Hidden checks of modules.copy_stacked_to_split: the copied weights, equivalence, the source untouched, errors.

The helper runs on reference layers (MultiHeadCausalAttentionStacked and MultiHeadCausalAttention). The stacked
layer gets seeded weights from ctx.init_module; the split layer keeps a different, seeded default
initialisation, so anything the helper forgets to copy (out_proj, a bias, a head) shows. The source-untouched and
ValueError checks are gated on the copied weights (probe.gated): a helper that copies nothing cannot earn them.
"""

import torch

from autograder.probe import check, gate_values, gated, raised, state_dict_outputs

CONFIGS = [  # (d_in, d_out, context_length, n_heads, bias)
    (6, 12, 8, 3, False),
    (5, 8, 6, 4, True),
    (4, 6, 5, 1, False),
    (3, 4, 4, 4, True),
]
INIT_SCALE = 0.5


def _pair(impl, ctx, d_in, d_out, context_length, n_heads, bias):
    ctx.seed_torch()
    stacked = ctx.init_module(impl.modules.MultiHeadCausalAttentionStacked(d_in, d_out, context_length, n_heads,
                                                                           dropout=0.1, bias=bias),
                              scale=INIT_SCALE)
    ctx.seed_torch(1)
    split = impl.modules.MultiHeadCausalAttention(d_in, d_out, context_length, n_heads, dropout=0.1, bias=bias)
    return stacked, split



def _label(d_in, d_out, context_length, n_heads, bias):
    return f"({d_in}, {d_out}, {context_length}, n_heads={n_heads}, bias={bias})"


@check("weight_copy", weight=3, tolerance="exact",
       description="after copy_stacked_to_split, every weight and bias of the split layer (W_q, W_k, W_v in head "
                   "order, out_proj) for several shapes, one head and head width 1 included")
def copied_weights(impl, ref, ctx):
    outputs = {}
    for config in CONFIGS:
        stacked, split = _pair(impl, ctx, *config)
        impl.modules.copy_stacked_to_split(stacked, split)
        outputs.update(state_dict_outputs(split, prefix=f"split layer {_label(*config)}"))
    return outputs


def _stacked_untouched(student, reference, ctx):
    for name, value in student.items():
        if name.startswith("stacked before"):
            after = student[name.replace("stacked before", "stacked after", 1)]
            if not torch.equal(value, after):
                yield "copy_stacked_to_split must copy from the stacked layer into the split layer, and leave the " \
                      "stacked layer unchanged"
                return


WHAT = "copy_stacked_to_split"


@check("weight_copy", weight=1, verify=gated(_stacked_untouched, what=WHAT), compare_reference=False,
       description="the stacked layer (the source) is left unchanged")
def source_untouched(impl, ref, ctx):
    stacked, split = _pair(impl, ctx, 6, 12, 8, 3, True)
    before = state_dict_outputs(stacked, prefix="stacked before")
    impl.modules.copy_stacked_to_split(stacked, split)
    return {**before, **state_dict_outputs(stacked, prefix="stacked after"),
            **gate_values(state_dict_outputs(split, prefix="split layer (6, 12, 8, n_heads=3, bias=True)"))}


def _same_output(student, reference, ctx):
    for name, stacked in student.items():
        if name.startswith("stacked"):
            split = student[name.replace("stacked", "split", 1)]
            if stacked.shape != split.shape or not torch.allclose(split, stacked, rtol=1e-4, atol=1e-5):
                yield f"{name.replace('stacked output', 'layers')}: after the copy, the split layer must compute " \
                      f"the same output as the stacked layer"
                return


@check("weight_copy", weight=2, verify=_same_output,
       description="after the copy, the split and the stacked layer compute the same output (eval mode)")
def same_output(impl, ref, ctx):
    outputs = {}
    for config in CONFIGS[:3]:
        stacked, split = _pair(impl, ctx, *config)
        impl.modules.copy_stacked_to_split(stacked, split)
        x = ctx.randn(2, config[2], config[0])
        with torch.no_grad():
            outputs[f"stacked output {_label(*config)}"] = stacked.eval()(x)
            outputs[f"split output {_label(*config)}"] = split.eval()(x)
    return outputs


@check("weight_copy", weight=1, verify=gated(what=WHAT), compare_reference=False,
       description="raises ValueError when the layers have different numbers of heads or different shapes")
def errors(impl, ref, ctx):
    stacked, _ = _pair(impl, ctx, 6, 12, 8, 3, False)
    _, four_heads = _pair(impl, ctx, 6, 12, 8, 4, False)
    _, narrower_input = _pair(impl, ctx, 5, 12, 8, 3, False)
    copy = impl.modules.copy_stacked_to_split
    source, target = _pair(impl, ctx, 5, 8, 6, 4, True)
    copy(source, target)
    return {
        **gate_values(state_dict_outputs(target, prefix="split layer (5, 8, 6, n_heads=4, bias=True)")),
        "exception for 3 stacked heads into 4 split heads (same d_in, d_out)": raised(
            lambda: copy(stacked, four_heads)),
        "exception for stacked d_in=6 into split d_in=5": raised(lambda: copy(stacked, narrower_input)),
    }
