"""The embedder builds `librarian quantize` and `train --encoder` make, and where each sits
in a models directory. Import-light: the CLI's options read it."""

from __future__ import annotations

from typing import Literal

Encoder = Literal["int8", "openvino"]
ENCODER_DIRECTORIES: dict[str, str] = {"int8": "embedder-int8", "openvino": "embedder-openvino"}
