#!/usr/bin/env python3
"""Tiny but COMPLETE GGUF models for the llama.cpp interop suite (llamacpp.test.mjs).

Run inside the Debian sid chroot (sid.sh), with its python3, numpy and gguf-py (python3-gguf):

    python3 models.py OUT_DIR

Every case is a model libllama loads: each tensor its architecture needs, small seeded random
weights (F16 matrices, F32 norms, biases and RoPE factor tables), an SPM tokenizer in the metadata,
and as few layers as the case allows. The metadata keys are those llama.cpp's own converter
(convert_hf_to_gguf.py) writes for the architecture; where a case needs a value a real
checkpoint would not have (non-default YaRN betas), it says so in `notes`, to see whether
llama.cpp reads the key at all.

OUT_DIR/manifest.json lists the cases: file, architecture, the runs (n_ctx, tokens, a context
shift, positions, embeddings input), which layers are sliding-window (llama.cpp's fixed pattern for the
architecture) and, for the two bad files, what was corrupted.
"""
import json
import math
import os
import struct
import sys

import numpy as np
import gguf

VOCAB = 512
SEED = 20261201


class Tiny:
    """A GGUFWriter with seeded random tensors."""

    def __init__(self, path, arch, seed):
        self.w = gguf.GGUFWriter(path, arch)
        self.arch = arch
        self.rng = np.random.default_rng(seed)
        self.names = []

    def mat(self, name, n_out, n_in, dtype=np.float16, scale=None):
        # numpy shape (out, in) = ggml ne [in, out]
        s = scale if scale is not None else 1.0 / math.sqrt(n_in)
        self.add(name, (self.rng.standard_normal((n_out, n_in)) * s).astype(dtype))

    def arr(self, name, shape, dtype=np.float16, scale=0.05):
        self.add(name, (self.rng.standard_normal(shape) * scale).astype(dtype))

    def norm(self, name, n):
        self.add(name, (1.0 + 0.1 * self.rng.standard_normal(n)).astype(np.float32))

    def bias(self, name, n):
        self.add(name, (0.1 * self.rng.standard_normal(n)).astype(np.float32))

    def add(self, name, data):
        self.names.append(name)
        self.w.add_tensor(name, data)

    def tokenizer(self):
        # SentencePiece ("llama") vocabulary: <unk> <s> </s>, the 256 byte tokens, then words.
        tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
        tokens += [f"w{i}" for i in range(VOCAB - len(tokens))]
        types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
        types += [gguf.TokenType.BYTE] * 256 + [gguf.TokenType.NORMAL] * (VOCAB - 259)
        w = self.w
        w.add_tokenizer_model("llama")
        w.add_tokenizer_pre("default")
        w.add_token_list(tokens)
        w.add_token_scores([0.0] * 3 + [-1000.0] * 256 + [-float(i) for i in range(VOCAB - 259)])
        w.add_token_types([int(t) for t in types])
        w.add_bos_token_id(1)
        w.add_eos_token_id(2)
        w.add_unk_token_id(0)

    def finish(self):
        self.w.write_header_to_file()
        self.w.write_kv_data_to_file()
        self.w.write_tensors_to_file()
        self.w.close()


def common(t, *, n_ctx_train, n_embd, n_layer, n_ff, n_head, n_head_kv, rms_eps=1e-5, norm_eps=None):
    w = t.w
    w.add_block_count(n_layer)
    w.add_context_length(n_ctx_train)
    w.add_embedding_length(n_embd)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head_kv)
    if norm_eps is not None:
        w.add_layer_norm_eps(norm_eps)
    else:
        w.add_layer_norm_rms_eps(rms_eps)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)


def yarn_keys(w, rp):
    """TextModel.set_gguf_parameters for rope_type yarn: type, factor, original context, then the
    optional extrapolation/attention factors and betas when the config has them."""
    w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
    w.add_rope_scaling_factor(rp["factor"])
    w.add_rope_scaling_orig_ctx_len(rp["original_max_position_embeddings"])
    if "beta_fast" in rp:
        w.add_rope_scaling_yarn_beta_fast(rp["beta_fast"])
    if "beta_slow" in rp:
        w.add_rope_scaling_yarn_beta_slow(rp["beta_slow"])


def llama3_factors(theta, dim, factor, low, high, original):
    """convert_hf_to_gguf.py LlamaModel.generate_extra_tensors (rope_type llama3), in float32 as the
    converter's torch code computes it."""
    freqs = np.float32(1.0) / (np.float32(theta) ** (np.arange(0, dim, 2, dtype=np.float32) / np.float32(dim)))
    low_wavelen = original / low
    high_wavelen = original / high
    out = []
    for freq in freqs:
        wavelen = np.float32(2 * math.pi) / freq
        if wavelen < high_wavelen:
            out.append(1.0)
        elif wavelen > low_wavelen:
            out.append(factor)
        else:
            smooth = (np.float32(original) / wavelen - np.float32(low)) / np.float32(high - low)
            out.append(np.float32(1) / ((np.float32(1) - smooth) / np.float32(factor) + smooth))
    return np.array(out, dtype=np.float32)


# ---- architectures -----------------------------------------------------------------------------

def llama_like(t, *, n_layer, n_embd, n_head, n_head_kv, head, n_ff, qkv_bias=False, qk_norm=False):
    t.tokenizer()
    t.mat("token_embd.weight", VOCAB, n_embd)
    t.norm("output_norm.weight", n_embd)
    t.mat("output.weight", VOCAB, n_embd)
    for i in range(n_layer):
        p = f"blk.{i}."
        t.norm(p + "attn_norm.weight", n_embd)
        t.mat(p + "attn_q.weight", n_head * head, n_embd)
        t.mat(p + "attn_k.weight", n_head_kv * head, n_embd)
        t.mat(p + "attn_v.weight", n_head_kv * head, n_embd)
        if qkv_bias:
            t.bias(p + "attn_q.bias", n_head * head)
            t.bias(p + "attn_k.bias", n_head_kv * head)
            t.bias(p + "attn_v.bias", n_head_kv * head)
        if qk_norm:
            t.norm(p + "attn_q_norm.weight", head)
            t.norm(p + "attn_k_norm.weight", head)
        t.mat(p + "attn_output.weight", n_embd, n_head * head)
        t.norm(p + "ffn_norm.weight", n_embd)
        t.mat(p + "ffn_gate.weight", n_ff, n_embd)
        t.mat(p + "ffn_up.weight", n_ff, n_embd)
        t.mat(p + "ffn_down.weight", n_embd, n_ff)


def make_llama(path, variant):
    t = Tiny(path, "llama", SEED + 1)
    n_embd, n_head, n_kv, head = 256, 4, 2, 64
    common(t, n_ctx_train=8192, n_embd=n_embd, n_layer=1, n_ff=256, n_head=n_head, n_head_kv=n_kv)
    w = t.w
    w.add_vocab_size(VOCAB)
    w.add_rope_dimension_count(head)     # LlamaModel: rope.dimension_count = head_dim
    theta = 500000.0 if variant == "llama3" else 10000.0
    w.add_rope_freq_base(theta)
    notes = ""
    if variant == "linear":        # rope_scaling {rope_type: linear, factor: 4}
        w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
        w.add_rope_scaling_factor(4.0)
    elif variant == "scale_linear":  # the old converter's {arch}.rope.scale_linear (no scaling.type)
        w.add_float32("llama.rope.scale_linear", 4.0)
        notes = "legacy key llama.rope.scale_linear = 4 (pre-2023-11 converters), no rope.scaling.*"
    elif variant == "none_factor":   # rope.scaling.type none, yet a factor set
        w.add_rope_scaling_type(gguf.RopeScalingType.NONE)
        w.add_rope_scaling_factor(4.0)
        notes = "rope.scaling.type = none with rope.scaling.factor = 4"
    elif variant == "yarn":
        yarn_keys(w, {"factor": 4.0, "original_max_position_embeddings": 2048, "beta_fast": 16.0, "beta_slow": 2.0})
        notes = "non-default yarn_beta_fast = 16, yarn_beta_slow = 2 (does llama.cpp read them for llama?)"
    llama_like(t, n_layer=1, n_embd=n_embd, n_head=n_head, n_head_kv=n_kv, head=head, n_ff=256)
    if variant == "llama3":  # Llama 3.1: rope_scaling {llama3, 8, 1, 4, 8192} → rope_freqs.weight only
        t.add("rope_freqs.weight", llama3_factors(theta, head, 8.0, 1.0, 4.0, 8192))
        notes = "rope_freqs.weight from rope_type llama3, factor 8, low 1, high 4, original 8192"
    t.finish()
    return notes


def make_qwen2(path, variant):
    t = Tiny(path, "qwen2", SEED + 2)
    n_embd, n_head, n_kv, head = 256, 4, 2, 64
    common(t, n_ctx_train=32768, n_embd=n_embd, n_layer=1, n_ff=256, n_head=n_head, n_head_kv=n_kv, rms_eps=1e-6)
    w = t.w
    w.add_rope_freq_base(1000000.0)
    notes = ""
    if variant == "yarn":
        yarn_keys(w, {"factor": 4.0, "original_max_position_embeddings": 4096, "beta_fast": 16.0, "beta_slow": 2.0})
        notes = "YaRN factor 4, original 4096, non-default yarn_beta_fast = 16, yarn_beta_slow = 2"
    llama_like(t, n_layer=1, n_embd=n_embd, n_head=n_head, n_head_kv=n_kv, head=head, n_ff=256, qkv_bias=True)
    t.finish()
    return notes


def make_phi3(path, variant):
    """Phi-3-mini-128k style LongRoPE: Phi3MiniModel.set_gguf_parameters / generate_extra_tensors."""
    t = Tiny(path, "phi3", SEED + 3)
    n_embd, n_head, head, n_ff = 256, 4, 64, 256
    max_pos, orig = 131072, 4096
    w = t.w
    w.add_context_length(max_pos)
    w.add_rope_scaling_orig_ctx_len(orig)
    w.add_embedding_length(n_embd)
    w.add_feed_forward_length(n_ff)
    w.add_block_count(1)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_dimension_count(head)
    w.add_rope_freq_base(10000.0)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    w.add_sliding_window(262144)
    scale = max_pos / orig
    w.add_rope_scaling_attn_factors(math.sqrt(1 + math.log(scale) / math.log(orig)))
    t.tokenizer()
    t.mat("token_embd.weight", VOCAB, n_embd)
    t.norm("output_norm.weight", n_embd)
    t.mat("output.weight", VOCAB, n_embd)
    rng = np.random.default_rng(SEED + 33)
    half = head // 2
    t.add("rope_factors_long.weight", np.sort(1.0 + rng.random(half) * 40.0).astype(np.float32))
    t.add("rope_factors_short.weight", np.sort(1.0 + rng.random(half) * 2.0).astype(np.float32))
    p = "blk.0."
    t.norm(p + "attn_norm.weight", n_embd)
    t.mat(p + "attn_qkv.weight", 3 * n_embd, n_embd)
    t.mat(p + "attn_output.weight", n_embd, n_embd)
    t.norm(p + "ffn_norm.weight", n_embd)
    t.mat(p + "ffn_up.weight", 2 * n_ff, n_embd)
    t.mat(p + "ffn_down.weight", n_embd, n_ff)
    t.finish()
    return "LongRoPE: rope_factors_long/short.weight, rope.scaling.attn_factor, original 4096, context 131072"


def make_phi2(path, variant):
    """Phi2Model: rope.dimension_count = int(partial_rotary_factor * n_embd) // n_head (0.375 → 24 of 64)."""
    t = Tiny(path, "phi2", SEED + 4)
    n_embd, n_head, head = 256, 4, 64
    w = t.w
    w.add_context_length(2048)
    w.add_embedding_length(n_embd)
    w.add_feed_forward_length(4 * n_embd)
    w.add_block_count(1)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head)
    w.add_layer_norm_eps(1e-5)
    w.add_rope_dimension_count(int(0.375 * n_embd) // n_head)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    w.add_add_bos_token(False)
    t.tokenizer()
    t.mat("token_embd.weight", VOCAB, n_embd)
    t.norm("output_norm.weight", n_embd)
    t.bias("output_norm.bias", n_embd)
    t.mat("output.weight", VOCAB, n_embd)
    t.bias("output.bias", VOCAB)
    p = "blk.0."
    t.norm(p + "attn_norm.weight", n_embd)
    t.bias(p + "attn_norm.bias", n_embd)
    t.mat(p + "attn_qkv.weight", 3 * n_embd, n_embd)
    t.bias(p + "attn_qkv.bias", 3 * n_embd)
    t.mat(p + "attn_output.weight", n_embd, n_embd)
    t.bias(p + "attn_output.bias", n_embd)
    t.mat(p + "ffn_up.weight", 4 * n_embd, n_embd)
    t.bias(p + "ffn_up.bias", 4 * n_embd)
    t.mat(p + "ffn_down.weight", n_embd, 4 * n_embd)
    t.bias(p + "ffn_down.bias", n_embd)
    t.finish()
    return "partial rotary: rope.dimension_count 24 of head 64 (no rope.freq_base: 10000)"


def make_stablelm(path, variant):
    """StableLMModel: rope.dimension_count = int(partial_rotary_factor * head_dim) (0.25 → 16 of 64)."""
    t = Tiny(path, "stablelm", SEED + 5)
    n_embd, n_head, head, n_ff = 256, 4, 64, 256
    w = t.w
    w.add_context_length(4096)
    w.add_embedding_length(n_embd)
    w.add_block_count(1)
    w.add_feed_forward_length(n_ff)
    w.add_rope_dimension_count(int(0.25 * head))
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head)
    w.add_parallel_residual(False)
    w.add_layer_norm_eps(1e-5)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    w.add_rope_freq_base(10000.0)
    t.tokenizer()
    t.mat("token_embd.weight", VOCAB, n_embd)
    t.norm("output_norm.weight", n_embd)
    t.bias("output_norm.bias", n_embd)
    t.mat("output.weight", VOCAB, n_embd)
    p = "blk.0."
    t.norm(p + "attn_norm.weight", n_embd)
    t.bias(p + "attn_norm.bias", n_embd)
    t.mat(p + "attn_q.weight", n_embd, n_embd)
    t.mat(p + "attn_k.weight", n_embd, n_embd)
    t.mat(p + "attn_v.weight", n_embd, n_embd)
    t.mat(p + "attn_output.weight", n_embd, n_embd)
    t.norm(p + "ffn_norm.weight", n_embd)
    t.bias(p + "ffn_norm.bias", n_embd)
    t.mat(p + "ffn_gate.weight", n_ff, n_embd)
    t.mat(p + "ffn_up.weight", n_ff, n_embd)
    t.mat(p + "ffn_down.weight", n_embd, n_ff)
    t.finish()
    return "partial rotary: rope.dimension_count 16 of head 64"


def make_gpt_oss(path, variant):
    """GptOssModel: the generic keys (YaRN from rope_scaling), sliding_window, expert ff length."""
    t = Tiny(path, "gpt-oss", SEED + 6)
    n_embd, n_head, n_kv, head, n_layer, n_exp, n_ff = 256, 4, 2, 64, 2, 4, 128
    common(t, n_ctx_train=131072, n_embd=n_embd, n_layer=n_layer, n_ff=n_ff, n_head=n_head, n_head_kv=n_kv)
    w = t.w
    w.add_expert_count(n_exp)
    w.add_expert_used_count(2)
    w.add_key_length(head)
    w.add_value_length(head)
    w.add_rope_freq_base(150000.0)
    yarn_keys(w, {"factor": 32.0, "original_max_position_embeddings": 4096, "beta_fast": 24.0, "beta_slow": 2.0})
    w.add_sliding_window(128)
    w.add_expert_feed_forward_length(n_ff)
    t.tokenizer()
    t.mat("token_embd.weight", VOCAB, n_embd)
    t.norm("output_norm.weight", n_embd)
    t.mat("output.weight", VOCAB, n_embd)
    for i in range(n_layer):
        p = f"blk.{i}."
        t.norm(p + "attn_norm.weight", n_embd)
        t.mat(p + "attn_q.weight", n_head * head, n_embd)
        t.bias(p + "attn_q.bias", n_head * head)
        t.mat(p + "attn_k.weight", n_kv * head, n_embd)
        t.bias(p + "attn_k.bias", n_kv * head)
        t.mat(p + "attn_v.weight", n_kv * head, n_embd)
        t.bias(p + "attn_v.bias", n_kv * head)
        t.mat(p + "attn_output.weight", n_embd, n_head * head)
        t.bias(p + "attn_output.bias", n_embd)
        t.bias(p + "attn_sinks.weight", n_head)
        t.norm(p + "post_attention_norm.weight", n_embd)
        t.mat(p + "ffn_gate_inp.weight", n_exp, n_embd, dtype=np.float32)
        t.bias(p + "ffn_gate_inp.bias", n_exp)
        t.arr(p + "ffn_gate_exps.weight", (n_exp, n_ff, n_embd))
        t.add(p + "ffn_gate_exps.bias", (0.1 * t.rng.standard_normal((n_exp, n_ff))).astype(np.float32))
        t.arr(p + "ffn_up_exps.weight", (n_exp, n_ff, n_embd))
        t.add(p + "ffn_up_exps.bias", (0.1 * t.rng.standard_normal((n_exp, n_ff))).astype(np.float32))
        t.arr(p + "ffn_down_exps.weight", (n_exp, n_embd, n_ff))
        t.add(p + "ffn_down_exps.bias", (0.1 * t.rng.standard_normal((n_exp, n_embd))).astype(np.float32))
    t.finish()
    return "YaRN factor 32, original 4096, theta 150000, non-default yarn_beta_fast = 24, yarn_beta_slow = 2; sliding_window 128"


def make_gemma3(path, variant):
    """Gemma3Model: global θ 1e6 with linear scaling 8 (global layers only), local θ in
    rope.freq_base_swa (rope_parameters.sliding_attention.rope_theta)."""
    t = Tiny(path, "gemma3", SEED + 7)
    n_embd, n_head, n_kv, head, n_layer, n_ff = 256, 4, 2, 64, 6, 256
    w = t.w
    w.add_context_length(131072)
    w.add_embedding_length(n_embd)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_key_length(head)
    w.add_value_length(head)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    w.add_rope_freq_base(1000000.0)
    local_theta = 10000.0 if variant != "swa_theta" else 20000.0
    w.add_rope_freq_base_swa(local_theta)
    w.add_sliding_window(512)
    w.add_head_count_kv(n_kv)
    w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
    w.add_rope_scaling_factor(8.0)
    t.tokenizer()
    t.mat("token_embd.weight", VOCAB, n_embd)
    t.norm("output_norm.weight", n_embd)
    for i in range(n_layer):
        p = f"blk.{i}."
        t.norm(p + "attn_norm.weight", n_embd)
        t.mat(p + "attn_q.weight", n_head * head, n_embd)
        t.mat(p + "attn_k.weight", n_kv * head, n_embd)
        t.mat(p + "attn_v.weight", n_kv * head, n_embd)
        t.norm(p + "attn_q_norm.weight", head)
        t.norm(p + "attn_k_norm.weight", head)
        t.mat(p + "attn_output.weight", n_embd, n_head * head)
        t.norm(p + "post_attention_norm.weight", n_embd)
        t.norm(p + "ffn_norm.weight", n_embd)
        t.mat(p + "ffn_gate.weight", n_ff, n_embd)
        t.mat(p + "ffn_up.weight", n_ff, n_embd)
        t.mat(p + "ffn_down.weight", n_embd, n_ff)
        t.norm(p + "post_ffw_norm.weight", n_embd)
    t.finish()
    if variant == "swa_theta":
        return "rope.freq_base_swa = 20000 (not Gemma 3's 10000: does llama.cpp read the key?); global θ 1e6, linear 8"
    return "global θ 1e6 with linear factor 8, local θ 10000 (rope.freq_base_swa); layers 0-4 sliding, 5 global"


def make_deepseek2(path, variant):
    """DeepseekV2Model (MLA, q_lora). variant 'mla': today's converter (MQA form: key_length =
    kv_lora_rank + rope, key_length_mla = nope + rope, attn_k_b / attn_v_b); 'legacy': the converter
    before MLA absorption (key_length = nope + rope = 192, attn_kv_b)."""
    t = Tiny(path, "deepseek2", SEED + 8)
    n_embd, n_head, n_layer, n_ff = 256, 4, 1, 256
    q_lora, kv_lora, nope, rope, v = 64, 64, 128, 64, 128
    rp = {"factor": 40.0, "original_max_position_embeddings": 4096, "beta_fast": 24.0, "beta_slow": 2.0,
          "mscale": 0.707, "mscale_all_dim": 0.707}
    w = t.w
    w.add_block_count(n_layer)
    w.add_context_length(163840)
    w.add_embedding_length(n_embd)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(1 if variant == "mla" else n_head)
    yarn_keys(w, rp)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    w.add_leading_dense_block_count(n_layer)
    w.add_vocab_size(VOCAB)
    w.add_q_lora_rank(q_lora)
    w.add_kv_lora_rank(kv_lora)
    if variant == "mla":
        w.add_key_length(kv_lora + rope)
        w.add_value_length(kv_lora)
        w.add_key_length_mla(nope + rope)
        w.add_value_length_mla(v)
    else:
        w.add_key_length(nope + rope)
        w.add_value_length(v)
    w.add_expert_feed_forward_length(n_ff)
    w.add_expert_shared_count(0)
    w.add_rope_dimension_count(rope)
    w.add_rope_scaling_yarn_log_mul(0.1 * rp["mscale_all_dim"])
    t.tokenizer()
    t.mat("token_embd.weight", VOCAB, n_embd)
    t.norm("output_norm.weight", n_embd)
    t.mat("output.weight", VOCAB, n_embd)
    for i in range(n_layer):
        p = f"blk.{i}."
        t.norm(p + "attn_norm.weight", n_embd)
        t.mat(p + "attn_q_a.weight", q_lora, n_embd)
        t.norm(p + "attn_q_a_norm.weight", q_lora)
        t.mat(p + "attn_q_b.weight", n_head * (nope + rope), q_lora)
        t.mat(p + "attn_kv_a_mqa.weight", kv_lora + rope, n_embd)
        t.norm(p + "attn_kv_a_norm.weight", kv_lora)
        if variant == "mla":
            # kv_b_proj split: k_b [n_head][kv_lora][nope] (transposed), v_b [n_head][v][kv_lora]
            t.arr(p + "attn_k_b.weight", (n_head, kv_lora, nope), scale=1.0 / math.sqrt(kv_lora))
            t.arr(p + "attn_v_b.weight", (n_head, v, kv_lora), scale=1.0 / math.sqrt(kv_lora))
        else:
            t.mat(p + "attn_kv_b.weight", n_head * (nope + v), kv_lora)
        t.mat(p + "attn_output.weight", n_embd, n_head * v)
        t.norm(p + "ffn_norm.weight", n_embd)
        t.mat(p + "ffn_gate.weight", n_ff, n_embd)
        t.mat(p + "ffn_up.weight", n_ff, n_embd)
        t.mat(p + "ffn_down.weight", n_embd, n_ff)
    t.finish()
    keys = ("key_length 128 (kv_lora 64 + rope 64), key_length_mla 192" if variant == "mla"
            else "legacy: key_length 192, attn_kv_b")
    return f"MLA q_lora 64, kv_lora 64, nope 128 + rope 64; {keys}; YaRN 40 / 4096, log_mul 0.0707, non-default betas 24 / 2"


def make_qwen2vl(path, variant):
    """Qwen2VLModel (text part): M-RoPE sections from rope_parameters.mrope_section, padded to 4."""
    arch = "qwen2vl" if variant == "qwen2vl" else "qwen3vl"
    t = Tiny(path, arch, SEED + 9)
    n_embd, n_head, n_kv, head = 256, 4, 2, 64
    common(t, n_ctx_train=32768, n_embd=n_embd, n_layer=1, n_ff=256, n_head=n_head, n_head_kv=n_kv, rms_eps=1e-6)
    w = t.w
    if arch == "qwen2vl":
        w.add_rope_dimension_sections([8, 12, 12, 0])   # Qwen2-VL [16, 24, 24] at head 128, halved
        w.add_rope_freq_base(1000000.0)
        llama_like(t, n_layer=1, n_embd=n_embd, n_head=n_head, n_head_kv=n_kv, head=head, n_ff=256, qkv_bias=True)
        note = "M-RoPE sections [8, 12, 12, 0] (Qwen2-VL's [16, 24, 24] halved for head 64)"
    else:
        w.add_rope_dimension_sections([12, 10, 10, 0])  # Qwen3-VL [24, 20, 20] at head 128, halved
        w.add_rope_freq_base(5000000.0)
        w.add_key_length(head)
        w.add_value_length(head)
        w.add_num_deepstack_layers(0)
        llama_like(t, n_layer=1, n_embd=n_embd, n_head=n_head, n_head_kv=n_kv, head=head, n_ff=256, qk_norm=True)
        note = "interleaved M-RoPE sections [12, 10, 10, 0] (Qwen3-VL's [24, 20, 20] halved for head 64)"
    t.finish()
    return note


# ---- positions for the M-RoPE cases -------------------------------------------------------------

def mrope_positions(segments):
    """Qwen2-VL's get_rope_index for text and image segments: text tokens p, p, p; an image of
    grid t × h × w starts at the next position and takes (start + ti, start + hi, start + wi);
    the text after it starts at the image's largest id + 1. Returns int32 [n][4] (t, y, x, 0) as
    llama_batch_ext_set_pos takes them."""
    rows = []
    nxt = 0
    for kind, spec in segments:
        if kind == "text":
            for i in range(spec):
                rows.append((nxt + i,) * 3 + (0,))
            nxt += spec
        else:
            gt, gh, gw = spec
            for ti in range(gt):
                for hi in range(gh):
                    for wi in range(gw):
                        rows.append((nxt + ti, nxt + hi, nxt + wi, 0))
            nxt += max(gt, gh, gw)
    return np.array(rows, dtype=np.int32)


# ---- the bad files ------------------------------------------------------------------------------

def tensor_infos(path):
    """(name, offset field position, offset, n_bytes) of every tensor of a GGUF v3 file, and the
    alignment: a small parser of the header, to patch the offsets in place."""
    with open(path, "rb") as f:
        data = f.read()
    pos = 0

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from("<" + fmt, data, pos)
        pos += struct.calcsize("<" + fmt)
        return v[0]

    def string():
        nonlocal pos
        n = take("Q")
        s = data[pos:pos + n].decode()
        pos += n
        return s

    sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}

    def skip_value(t):
        nonlocal pos
        if t == 8:
            string()
        elif t == 9:
            et, n = take("I"), take("Q")
            for _ in range(n):
                skip_value(et)
        else:
            pos += sizes[t]

    assert data[:4] == b"GGUF"
    pos = 4
    take("I")
    n_tensors, n_kv = take("Q"), take("Q")
    alignment = 32
    for _ in range(n_kv):
        key = string()
        t = take("I")
        if key == "general.alignment":
            alignment = take("I")
        else:
            skip_value(t)
    infos = []
    type_size = {0: 4, 1: 2}
    for _ in range(n_tensors):
        name = string()
        nd = take("I")
        ne = [take("Q") for _ in range(nd)]
        ty = take("I")
        at = pos
        off = take("Q")
        infos.append((name, at, off, int(np.prod(ne)) * type_size[ty]))
    return infos, alignment


def patch_offset(path, tensor, new_offset):
    infos, _ = tensor_infos(path)
    at = next(i[1] for i in infos if i[0] == tensor)
    with open(path, "r+b") as f:
        f.seek(at)
        f.write(struct.pack("<Q", new_offset))


def make_bad(out, name):
    """Two llama models libllama must refuse: rope_freqs.weight pointing at another tensor's data
    (aligned, in bounds), and token_embd.weight at offset 7."""
    path = os.path.join(out, name + ".gguf")
    make_llama(path, "llama3")
    infos, alignment = tensor_infos(path)
    by_name = {i[0]: i for i in infos}
    if name == "bad-rope-freqs-offset":
        target = by_name["blk.0.attn_norm.weight"]
        patch_offset(path, "rope_freqs.weight", target[2])
        return {"tensor": "rope_freqs.weight", "offset": target[2], "was": by_name["rope_freqs.weight"][2],
                "pointsAt": "blk.0.attn_norm.weight", "alignment": alignment}
    patch_offset(path, "token_embd.weight", 7)
    return {"tensor": "token_embd.weight", "offset": 7, "was": by_name["token_embd.weight"][2], "alignment": alignment}


# ---- the cases ----------------------------------------------------------------------------------

def main():
    if len(sys.argv) != 2:
        sys.exit("usage: python3 models.py OUT_DIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    run = lambda n_ctx, n_tokens, **kw: dict(nCtx=n_ctx, nTokens=n_tokens, **kw)  # noqa: E731
    N = 4096
    # llama.cpp's context shift after 512 tokens: positions [4, 104) dropped, the rest moved by -100.
    shift = run(N, 512, label="shift", shift=dict(delta=100, keep=4))
    cases = [
        # name, builder, variant, runs, sliding layers
        ("llama", make_llama, "plain", [run(N, N), shift], []),
        ("llama-linear", make_llama, "linear", [run(N, N)], []),
        ("llama-scale-linear", make_llama, "scale_linear", [run(N, N)], []),
        ("llama-none-factor", make_llama, "none_factor", [run(N, N)], []),
        ("llama3.1-rope-freqs", make_llama, "llama3", [run(N, N), dict(shift)], []),
        ("llama-yarn", make_llama, "yarn", [run(N, N), dict(shift)], []),
        ("qwen2", make_qwen2, "plain", [run(N, N), dict(shift)], []),
        ("qwen2-yarn", make_qwen2, "yarn", [run(N, N)], []),
        ("phi3-longrope", make_phi3, "", [run(N, N, label="short"), run(8192, 5120, label="long")], []),
        ("phi2-partial", make_phi2, "", [run(2048, 2048), run(2048, 512, label="shift", shift=dict(delta=100, keep=4))], []),
        ("stablelm-partial", make_stablelm, "", [run(N, N)], []),
        ("gpt-oss-yarn", make_gpt_oss, "", [run(N, N)], [0]),           # set_swa_pattern(2): even layers
        ("gemma3", make_gemma3, "", [run(N, 2048)], [0, 1, 2, 3, 4]),       # set_swa_pattern(6)
        ("gemma3-swa-theta", make_gemma3, "swa_theta", [run(N, 1024)], [0, 1, 2, 3, 4]),
        ("deepseek2-mla", make_deepseek2, "mla", [run(N, N)], []),
        ("deepseek2-legacy", make_deepseek2, "legacy", [run(N, N)], []),
        ("qwen2vl-mrope", make_qwen2vl, "qwen2vl", [run(N, 0, mrope=True)], []),
        ("qwen3vl-imrope", make_qwen2vl, "qwen3vl", [run(N, 0, mrope=True)], []),
    ]
    manifest = {"seed": SEED, "gguf": getattr(gguf, "__version__", None), "cases": []}
    try:
        import importlib.metadata as md
        manifest["gguf"] = md.version("gguf")
    except Exception:
        pass
    # Text, an image grid 1 × 32 × 48, text, a second image 2 × 16 × 16, text: distinct t / h / w.
    segments = [("text", 40), ("image", (1, 32, 48)), ("text", 100), ("image", (2, 16, 16)), ("text", 60)]
    mpos = mrope_positions(segments)
    mpos_file = os.path.join(out, "mrope-positions.i32")
    mpos.tofile(mpos_file)
    for name, builder, variant, runs, swa in cases:
        path = os.path.join(out, name + ".gguf")
        notes = builder(path, variant)
        for r in runs:
            if r.pop("mrope", False):
                r["nTokens"] = int(mpos.shape[0])
                r["positions"] = os.path.basename(mpos_file)
                r["embd"] = True
                r["segments"] = [[k, s] for k, s in segments]
        manifest["cases"].append({"name": name, "file": name + ".gguf", "arch": gguf.GGUFReader(path).fields[
            "general.architecture"].contents(), "runs": runs, "slidingLayers": swa, "notes": notes})
    for name in ("bad-rope-freqs-offset", "bad-token-embd-offset-7"):
        bad = make_bad(out, name)
        manifest["cases"].append({"name": name, "file": name + ".gguf", "arch": "llama", "runs": [], "negative": bad,
                                  "slidingLayers": [], "notes": f"{bad['tensor']} offset {bad['offset']}"})
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(json.dumps([c["name"] for c in manifest["cases"]]))


if __name__ == "__main__":
    main()
