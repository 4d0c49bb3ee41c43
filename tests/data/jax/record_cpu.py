"""A CPU JAX capture with the HLO modules of a matmul, a batched matmul and a convolution (tests/data/jax/README.md).

The functions are compiled inside the trace (no call before start_trace), so that the XPlane carries their HLO.
"""
import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def matmul(a, b):
    return jnp.dot(a, b)


@jax.jit
def conv(x, w):
    # NCHW input, OIHW kernel, stride 1, SAME padding
    return lax.conv_general_dilated(x, w, window_strides=(1, 1), padding="SAME",
                                    dimension_numbers=("NCHW", "OIHW", "NCHW"))


@jax.jit
def bmm(a, b):
    return jnp.einsum("bij,bjk->bik", a, b)


a = jnp.ones((128, 256), jnp.float32)
b = jnp.ones((256, 64), jnp.float32)
x = jnp.ones((2, 8, 16, 16), jnp.float32)
w = jnp.ones((4, 8, 3, 3), jnp.float32)
p = jnp.ones((4, 32, 16), jnp.float32)
q = jnp.ones((4, 16, 8), jnp.float32)
jax.profiler.start_trace("/tmp/jaxrec/out")
for _ in range(2):
    matmul(a, b).block_until_ready()
    conv(x, w).block_until_ready()
    bmm(p, q).block_until_ready()
jax.profiler.stop_trace()
