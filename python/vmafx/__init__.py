"""vmafx: video quality (VMAF and companion metrics) identical to libvmaf 3.2.

>>> import vmafx
>>> r = vmafx.score("ref.y4m", "dist.y4m")          # vmaf_v0.6.1 by default
>>> r.pooled("vmaf")["mean"]
>>> ctx = vmafx.Context(1920, 1080, models=["vmaf_v0.6.1"], features=["psnr"])
>>> ctx.submit((y, u, v), (y2, u2, v2))              # numpy planes
>>> for index, values in ctx.finished(): ...
>>> result = ctx.finish()

See docs/python.md.
"""

from ._vmafx import LIBVMAF_VERSION, Context, Result, VmafxError, score

__all__ = ["Context", "Result", "VmafxError", "score", "LIBVMAF_VERSION", "to_pandas"]


def to_pandas(result):
    """The per-frame values of a Result as a pandas DataFrame (index: frame)."""
    import pandas as pd  # optional dependency

    return pd.DataFrame(result.frames, index=result.indices)
