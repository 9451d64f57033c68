"""What the module checks of assignment3 share: the other side of each mode a module meets.

The value checks call a module as it is built, in train mode, mostly under torch.no_grad(). A module must give the
same answers in eval mode (as when generating: model.eval(), torch.no_grad()), also when called again, and it must
train: its gradients reach its parameters, and after an optimiser step it computes with the new weights.
"""

import torch

from autograder.probe import called_twice

STEP = 0.05  # the SGD step's learning rate: the weights move visibly, the logits stay of the same size


def called_again_in_eval_mode(make, call, inputs, what):
    """called_twice on modules built by ``make`` and switched to eval mode, every call under torch.no_grad()."""

    def evaluate(module, x):
        with torch.no_grad():
            return call(module, x)

    return called_twice(lambda: make().eval(), evaluate, inputs, what=f"{what} in eval mode")


def forward_with_causal(module, case):
    """``module(x, causal=causal)`` for ``case = (x, causal)``, on a copy of x (an in-place change of the caller's
    x is another check's business, not a state kept between calls)."""
    x, causal = case
    return module(x.clone(), causal=causal)


def one_training_step(module, loss_of, parameters, inputs=None):
    """Probe helper: a training step by hand on ``module`` (in train mode, autograd on).

    Returns the gradients of ``loss_of(module)`` reaching each named parameter and each input tensor (which must
    require grad), then, after one SGD step on every parameter, the loss again and the gradient reaching the first
    named parameter again (a tensor computed from the old weights and kept, or a graph freed by the first
    backward, shows there).
    """
    named = dict(module.named_parameters())
    loss = loss_of(module)
    if not (isinstance(loss, torch.Tensor) and loss.requires_grad):
        return {f"gradient reaching {name}": "no gradient reaches the loss" for name in [*parameters, *(inputs or {})]}
    loss.backward()
    outputs = {f"gradient reaching {name}": _gradient(named.get(name)) for name in parameters}
    outputs.update({f"gradient reaching {name}": _gradient(tensor) for name, tensor in (inputs or {}).items()})
    with torch.no_grad():
        for parameter in named.values():
            if parameter.grad is not None:
                parameter -= STEP * parameter.grad
            parameter.grad = None
    again = loss_of(module)
    outputs["loss after one SGD step"] = again.detach().clone()
    again.backward()
    outputs[f"gradient reaching {parameters[0]} after the step"] = _gradient(named.get(parameters[0]))
    return outputs


def _gradient(tensor):
    if tensor is None:
        return "no such parameter"
    return tensor.grad.detach().clone() if tensor.grad is not None else "no gradient"
