"""What the layer checks of assignment2 share: a layer called again on another length, then on the first input."""

import torch

from autograder.probe import called_twice

AGAIN = ("a layer called again (a longer or shorter input, then the first one) gives what a fresh layer gives: "
         "nothing kept on the layer (a mask cut to the first length, memoised keys) changes the next call")


def layer_called_again(make, ctx, first_shape, second_shape, what):
    """called_twice on layers built by ``make``: x of first_shape, x of second_shape, the first x again."""
    first = ctx.randn(*first_shape)

    def forward(layer, x):
        with torch.no_grad():
            return layer(x)

    return called_twice(make, forward, {f"x {first_shape}": first, f"x {second_shape}": ctx.randn(*second_shape),
                                        "the first x again": first}, what=what)
