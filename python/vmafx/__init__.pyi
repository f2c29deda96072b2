from os import PathLike
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Union

LIBVMAF_VERSION: str

class VmafxError(Exception): ...

class Result:
    @property
    def indices(self) -> List[int]: ...
    @property
    def frames(self) -> List[Dict[str, float]]: ...
    @property
    def names(self) -> List[str]: ...
    @property
    def aggregate(self) -> Dict[str, float]: ...
    def pooled(self, name: str) -> Dict[str, float]: ...
    def __getitem__(self, name: str) -> List[float]: ...
    def __len__(self) -> int: ...

def score(
    reference: Union[str, PathLike],
    distorted: Union[str, PathLike],
    model: Optional[str] = None,
    models: Optional[Sequence[str]] = None,
    features: Optional[Sequence[str]] = None,
    threads: int = 0,
    subsample: int = 1,
    width: Optional[int] = None,
    height: Optional[int] = None,
    pix_fmt: Optional[str] = None,
    bit_depth: Optional[int] = None,
    backend: str = "cpu",  # "cpu", "cuda", "hip", "auto", as Context's
    device: str = "0",  # GPU index or UUID
    frame_skip_ref: int = 0,  # frames of the reference read and dropped first
    frame_skip_dist: int = 0,
    frame_cnt: Optional[int] = None,  # at most this many frames scored
) -> Result: ...

Planes = Union[Tuple[object, ...], List[object]]

class Context:
    def __init__(
        self,
        width: int,
        height: int,
        pix_fmt: str = "420",
        bit_depth: int = 8,
        models: Optional[Sequence[str]] = None,
        features: Optional[Sequence[str]] = None,
        threads: int = 0,
        subsample: int = 1,
        backend: str = "cpu",  # "cpu", "cuda", "hip", "auto"
        device: str = "0",  # GPU index or UUID
    ) -> None: ...
    def submit(self, reference: Planes, distorted: Planes) -> None: ...
    def finished(self) -> List[Tuple[int, Dict[str, float]]]: ...
    def finish(self) -> Result: ...

def to_pandas(result: Result) -> "pandas.DataFrame": ...  # noqa: F821
