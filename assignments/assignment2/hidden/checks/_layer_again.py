"""What the layer checks of assignment2 share: a layer called again on another length, then on the first input, in
train mode under torch.no_grad() and in eval mode with autograd on (both sides of each mode a layer meets)."""

import torch

from autograder.probe import called_twice

AGAIN = ("a layer called again (a longer or shorter input, then the first one) gives what a fresh layer gives: "
         "nothing kept on the layer (a mask cut to the first length, memoised keys) changes the next call")
AGAIN_IN_EVAL_MODE = ("in eval mode with autograd on, a layer gives what it gives in train mode without dropout, "
                      "on a fresh layer and when called again (a longer or shorter input, then the first one): no "
                      "keys or values kept on the layer for generation change the next call")


def layer_called_again(make, ctx, first_shape, second_shape, what):
    """called_twice on layers built by ``make``: x of first_shape, x of second_shape, the first x again."""

    def forward(layer, x):
        with torch.no_grad():
            return layer(x)

    return called_twice(make, forward, _inputs(ctx, first_shape, second_shape), what=what)


def layer_called_again_in_eval_mode(make, ctx, first_shape, second_shape, what):
    """As :func:`layer_called_again`, the layers switched to eval mode and called with autograd on."""
    return called_twice(lambda: make().eval(), lambda layer, x: layer(x), _inputs(ctx, first_shape, second_shape),
                        what=f"{what} in eval mode")


def _inputs(ctx, first_shape, second_shape):
    first = ctx.randn(*first_shape)
    return {f"x {first_shape}": first, f"x {second_shape}": ctx.randn(*second_shape), "the first x again": first}
