"""The real architectures ``test_models.py`` runs through the backend, each with random
weights, a small configuration and nothing downloaded: torchvision's and transformers'
own model classes built from configs, torch's ``nn.Transformer``, and two models written
here where no library has one small enough (a UNet block, an LSTM language model).

The self-test (``test/proofs/test_faulty_models.py``) breaks what these models hand the
backend and no small scenario does (attention kernels, group_norm, transposed convolution,
BatchNorm's buffer updates, big graphs) and requires the affected model tests to fail.
"""

from __future__ import annotations

import importlib.util

import torch
import torch.nn.functional as F
from torch import nn

from harness import compat
from harness import ModelSpec

VOCAB = 96
SEQUENCE = 16
BATCH = 2
CLASSES = 10


def classification_loss(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))


def images(size: int = 64) -> tuple[tuple[torch.Tensor], torch.Tensor]:
    return (torch.randn(BATCH, 3, size, size),), torch.randint(0, CLASSES, (BATCH,))


def tokens() -> tuple[tuple[torch.Tensor], torch.Tensor]:
    return (torch.randint(0, VOCAB, (BATCH, SEQUENCE)),), torch.randint(0, VOCAB, (BATCH, SEQUENCE))


def logits_of(model: nn.Module, *inputs: torch.Tensor) -> torch.Tensor:
    """transformers' models return a ModelOutput; the logits are what a user reads."""
    return model(*inputs).logits


# -- written here ------------------------------------------------------------------------


class UNetBlock(nn.Module):
    """One level of a diffusion-style UNet: GroupNorm + SiLU convolutions, a strided
    downsampling, an upsampling by interpolation and one by transposed convolution, and
    skip connections joined with cat."""

    def __init__(self, channels: int = 16, groups: int = 4) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, padding=1)
        self.norm1 = nn.GroupNorm(groups, channels)
        self.down = nn.Conv2d(channels, 2 * channels, 3, stride=2, padding=1)
        self.norm2 = nn.GroupNorm(groups, 2 * channels)
        self.middle = nn.Conv2d(2 * channels, 2 * channels, 3, stride=2, padding=1)
        self.norm3 = nn.GroupNorm(groups, 2 * channels)
        self.up_interpolated = nn.Conv2d(4 * channels, channels, 3, padding=1)
        self.up_transposed = nn.ConvTranspose2d(2 * channels, channels, 4, stride=2, padding=1)
        self.head = nn.Conv2d(2 * channels, 3, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        top = F.silu(self.norm1(self.stem(x)))
        down = F.silu(self.norm2(self.down(top)))
        middle = F.silu(self.norm3(self.middle(down)))
        up = F.interpolate(middle, scale_factor=2.0, mode="nearest")
        up = F.silu(self.up_interpolated(torch.cat([up, down], dim=1)))
        up = torch.cat([up, up], dim=1)
        return self.head(torch.cat([self.up_transposed(up), top], dim=1))


class LSTMLanguageModel(nn.Module):
    """Embedding, dropout, a two-layer LSTM and a tied output projection. Under Dynamo's
    defaults the LSTM runs eagerly between two compiled graphs, as it does for users."""

    def __init__(self, hidden: int = 32) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, hidden)
        self.drop = nn.Dropout(0.1)
        self.lstm = nn.LSTM(hidden, hidden, num_layers=2, batch_first=True)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        # A statement of its own: Dynamo runs the LSTM eagerly (it captures RNNs only with
        # allow_rnn) and can resume after a graph break only between statements.
        embedded = self.drop(self.embed(ids))
        hidden, _ = self.lstm(embedded)
        return self.drop(hidden) @ self.embed.weight.t()


class TransformerTranslator(nn.Module):
    """torch's own nn.Transformer between two token sequences, with a causal decoder mask
    (in eval under no_grad its encoder takes the fused fast path)."""

    def __init__(self, width: int = 32) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, width)
        self.transformer = nn.Transformer(width, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                                          dim_feedforward=64, dropout=0.1, batch_first=True)
        self.out = nn.Linear(width, VOCAB)

    def forward(self, source: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        mask = nn.Transformer.generate_square_subsequent_mask(target.shape[1])
        return self.out(self.transformer(self.embed(source), self.embed(target), tgt_mask=mask, tgt_is_causal=True))


def translation_pair() -> tuple[tuple[torch.Tensor, torch.Tensor], torch.Tensor]:
    (source,), target = tokens()
    return (source, torch.randint(0, VOCAB, (BATCH, SEQUENCE))), target


# -- torchvision -------------------------------------------------------------------------


def torchvision_model(name: str, **kwargs):
    return lambda: getattr(compat.import_torchvision().models, name)(**kwargs)


def torchvision_vit() -> nn.Module:
    vision_transformer = compat.import_torchvision().models.vision_transformer
    return vision_transformer.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2,
                                                hidden_dim=32, mlp_dim=64, num_classes=CLASSES)


# -- transformers ------------------------------------------------------------------------


def hf_model(class_name: str, config_name: str, **config):
    def build() -> nn.Module:
        if importlib.util.find_spec("torchvision") is not None:
            compat.import_torchvision()  # transformers imports it when present: make that import work
        import transformers

        settings = {"attn_implementation": "sdpa", **config}
        return getattr(transformers, class_name)(getattr(transformers, config_name)(**settings))

    return build


TINY_TEXT = dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                 intermediate_size=48, max_position_embeddings=64)


def t5_logits(model: nn.Module, input_ids: torch.Tensor, decoder_input_ids: torch.Tensor) -> torch.Tensor:
    return model(input_ids=input_ids, decoder_input_ids=decoder_input_ids).logits


# The default tier holds what fits the speed targets (bench/bench.py): the two models whose
# inductor compile from a cold cache takes seconds. The others take 20 s to 4 min each there.
COSTLY = "a real model: 20 s to 4 min to compile with inductor from a cold cache"

MODELS = [
    ModelSpec("resnet18", torchvision_model("resnet18", num_classes=CLASSES), images, classification_loss,
              requires=("torchvision",), nightly_only=COSTLY),
    ModelSpec("mobilenet_v3_small", torchvision_model("mobilenet_v3_small", num_classes=CLASSES), images,
              classification_loss, requires=("torchvision",), nightly_only=COSTLY),
    ModelSpec("shufflenet_v2", torchvision_model("shufflenet_v2_x0_5", num_classes=CLASSES), images,
              classification_loss, requires=("torchvision",), nightly_only=COSTLY),
    ModelSpec("vision_transformer", torchvision_vit, lambda: images(32), classification_loss,
              requires=("torchvision",), nightly_only=COSTLY),
    ModelSpec("bert", hf_model("BertForMaskedLM", "BertConfig", **TINY_TEXT), tokens, classification_loss,
              forward=logits_of, requires=("transformers",), nightly_only=COSTLY),
    ModelSpec("gpt2", hf_model("GPT2LMHeadModel", "GPT2Config", vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=2,
                               n_positions=64),
              tokens, classification_loss, forward=logits_of, requires=("transformers",), nightly_only=COSTLY),
    ModelSpec("t5", hf_model("T5ForConditionalGeneration", "T5Config", vocab_size=VOCAB, d_model=32, d_kv=16,
                             d_ff=48, num_layers=2, num_heads=2),
              translation_pair, classification_loss, forward=t5_logits, requires=("transformers",),
              nightly_only=COSTLY),
    ModelSpec("llama", hf_model("LlamaForCausalLM", "LlamaConfig", **{**TINY_TEXT, "num_attention_heads": 4},
                                num_key_value_heads=2),
              tokens, classification_loss, forward=logits_of, requires=("transformers",), nightly_only=COSTLY),
    ModelSpec("vit_hf", hf_model("ViTForImageClassification", "ViTConfig", image_size=32, patch_size=8,
                                 hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                 intermediate_size=48, num_labels=CLASSES),
              lambda: images(32), classification_loss, forward=logits_of, requires=("transformers",),
              nightly_only=COSTLY),
    ModelSpec("unet_block", UNetBlock, lambda: (images(32)[0], torch.randn(BATCH, 3, 32, 32)), F.mse_loss,
              nightly_only=COSTLY),
    ModelSpec("lstm_language_model", LSTMLanguageModel, tokens, classification_loss),
    # Its evaluation stays in the default tier (torch's fused encoder fast path); training it
    # was the default run's costliest test, 58 s of a cold inductor run on 2 cores.
    ModelSpec("nn_transformer", TransformerTranslator, translation_pair, classification_loss,
              nightly_train=COSTLY),
]
