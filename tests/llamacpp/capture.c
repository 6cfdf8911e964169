// capture: runs ONE llama_decode of the real libllama (Debian's libllama0 / libggml0, inside the sid
// chroot that sid.sh makes) and records every GGML_OP_ROPE node of the graph: its op params, the
// YaRN corr dims from ggml's own ggml_rope_yarn_corr_dims, its positions, freq factors, input and
// output. The interop suite (llamacpp.test.mjs) compares posenc against these records.
//
// Built on the host against the chroot's headers (gcc -I ROOT/usr/include), linked against
// nothing of llama.cpp: libllama and libggml are dlopen'ed at run time, and the ggml CPU backend is
// ONE chosen variant (--variant x64 = no FMA, or default = the one ggml_backend_load_all picks on
// this machine, or a file path), so the numbers compared are those of a known kernel.
//
//   capture --model M.gguf --out DIR [--variant x64|default|PATH] [--n-ctx N] [--n-tokens T]
//           [--positions FILE] [--embd] [--seed S] [--threads N] [--shift D --keep K]
//   capture --variants            (every CPU variant's ggml_backend_score on this machine, JSON)
//   capture --load M.gguf [--variant ...]   (only load: prints {"loaded": bool, "log": [...]})
//
// --positions FILE: int32 little-endian, n_pos_per_token values per token (4 for M-RoPE: t, y, x, z,
// as llama_batch_ext_set_pos takes them), token after token. --embd: feed seeded random embeddings
// instead of token ids (llama.cpp takes 4 position streams per token only for embeddings).
// --shift D --keep K: llama.cpp's context shift after the decode, as its examples do it — the
// positions [K, K + D) removed (llama_memory_seq_rm), the later ones moved by -D
// (llama_memory_seq_add) — then one more token decoded at the next position, which first applies
// the K-shift to the cache. The cache is float32 then (type_k, type_v), so the shifted keys are
// captured unrounded. Every node records its phase: 0 the first decode, 1 the second (the
// K-shift's rope nodes, then the new token's).
//
// DIR/nodes.json: the run (versions, variant, model facts) and one record per rope node, each
// array given as {"offset": bytes into nodes.bin, "count": elements, "type": "f32"|"i32"};
// DIR/nodes.bin: the raw little-endian data.
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ggml-backend.h"
#include "ggml.h"
#include "llama.h"

#define LIBDIR "/usr/lib/x86_64-linux-gnu"
#define BACKENDS LIBDIR "/ggml/backends0"

// ---- the libraries' functions, through dlsym -------------------------------------------------
#define FN(name) static __typeof__(&name) p_##name
FN(ggml_backend_load);
FN(ggml_backend_load_all);
FN(ggml_backend_reg_count);
FN(ggml_backend_reg_get);
FN(ggml_backend_reg_name);
FN(ggml_backend_reg_get_proc_address);
FN(ggml_backend_dev_count);
FN(ggml_backend_dev_get);
FN(ggml_backend_dev_name);
FN(ggml_backend_dev_description);
FN(ggml_backend_buffer_is_host);
FN(ggml_rope_yarn_corr_dims);
FN(ggml_rope_ext);
FN(ggml_rope_set_offset);
FN(ggml_init);
FN(ggml_free);
FN(ggml_new_tensor_1d);
FN(ggml_new_tensor_3d);
FN(ggml_fp16_to_fp32_row);
FN(ggml_version);
FN(ggml_commit);
FN(llama_log_set);
FN(llama_backend_init);
FN(llama_backend_free);
FN(llama_version);
FN(llama_print_system_info);
FN(llama_model_default_params);
FN(llama_context_default_params);
FN(llama_model_load_from_file);
FN(llama_model_free);
FN(llama_init_from_model);
FN(llama_free);
FN(llama_model_get_vocab);
FN(llama_vocab_n_tokens);
FN(llama_model_rope_type);
FN(llama_model_n_ctx_train);
FN(llama_model_n_embd);
FN(llama_model_n_layer);
FN(llama_model_n_head);
FN(llama_model_n_head_kv);
FN(llama_model_n_swa);
FN(llama_model_rope_freq_scale_train);
FN(llama_model_desc);
FN(llama_model_meta_count);
FN(llama_model_meta_key_by_index);
FN(llama_model_meta_val_str_by_index);
FN(llama_n_ctx);
FN(llama_n_ctx_seq);
FN(llama_batch_ext_init);
FN(llama_batch_ext_free);
FN(llama_batch_ext_add_token);
FN(llama_batch_ext_add_embd);
FN(llama_batch_ext_set_pos);
FN(llama_batch_ext_set_output_logits);
FN(llama_process);
FN(llama_batch_ext_clear);
FN(llama_get_memory);
FN(llama_memory_seq_rm);
FN(llama_memory_seq_add);

static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("capture: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(1);
}

static void *need(void *lib, const char *name) {
  void *p = dlsym(lib, name);
  if (!p) die("%s not found: %s", name, dlerror());
  return p;
}

static void *lib_ggml_base, *lib_ggml, *lib_llama;

static void load_libraries(void) {
  lib_ggml_base = dlopen("libggml-base.so.0", RTLD_NOW | RTLD_GLOBAL);
  if (!lib_ggml_base) die("dlopen libggml-base.so.0: %s", dlerror());
  lib_ggml = dlopen("libggml.so.0", RTLD_NOW | RTLD_GLOBAL);
  if (!lib_ggml) die("dlopen libggml.so.0: %s", dlerror());
  lib_llama = dlopen("libllama.so.0", RTLD_NOW | RTLD_GLOBAL);
  if (!lib_llama) die("dlopen libllama.so.0: %s", dlerror());
#define G(lib, name) p_##name = (__typeof__(p_##name))need(lib, #name)
  G(lib_ggml, ggml_backend_load);
  G(lib_ggml, ggml_backend_load_all);
  G(lib_ggml, ggml_backend_reg_count);
  G(lib_ggml, ggml_backend_reg_get);
  G(lib_ggml, ggml_backend_dev_count);
  G(lib_ggml, ggml_backend_dev_get);
  G(lib_ggml_base, ggml_backend_reg_name);
  G(lib_ggml_base, ggml_backend_reg_get_proc_address);
  G(lib_ggml_base, ggml_backend_dev_name);
  G(lib_ggml_base, ggml_backend_dev_description);
  G(lib_ggml_base, ggml_backend_buffer_is_host);
  G(lib_ggml_base, ggml_rope_yarn_corr_dims);
  G(lib_ggml_base, ggml_rope_ext);
  G(lib_ggml_base, ggml_rope_set_offset);
  G(lib_ggml_base, ggml_init);
  G(lib_ggml_base, ggml_free);
  G(lib_ggml_base, ggml_new_tensor_1d);
  G(lib_ggml_base, ggml_new_tensor_3d);
  G(lib_ggml_base, ggml_fp16_to_fp32_row);
  G(lib_ggml_base, ggml_version);
  G(lib_ggml_base, ggml_commit);
  G(lib_llama, llama_log_set);
  G(lib_llama, llama_backend_init);
  G(lib_llama, llama_backend_free);
  G(lib_llama, llama_version);
  G(lib_llama, llama_print_system_info);
  G(lib_llama, llama_model_default_params);
  G(lib_llama, llama_context_default_params);
  G(lib_llama, llama_model_load_from_file);
  G(lib_llama, llama_model_free);
  G(lib_llama, llama_init_from_model);
  G(lib_llama, llama_free);
  G(lib_llama, llama_model_get_vocab);
  G(lib_llama, llama_vocab_n_tokens);
  G(lib_llama, llama_model_rope_type);
  G(lib_llama, llama_model_n_ctx_train);
  G(lib_llama, llama_model_n_embd);
  G(lib_llama, llama_model_n_layer);
  G(lib_llama, llama_model_n_head);
  G(lib_llama, llama_model_n_head_kv);
  G(lib_llama, llama_model_n_swa);
  G(lib_llama, llama_model_rope_freq_scale_train);
  G(lib_llama, llama_model_desc);
  G(lib_llama, llama_model_meta_count);
  G(lib_llama, llama_model_meta_key_by_index);
  G(lib_llama, llama_model_meta_val_str_by_index);
  G(lib_llama, llama_n_ctx);
  G(lib_llama, llama_n_ctx_seq);
  G(lib_llama, llama_batch_ext_init);
  G(lib_llama, llama_batch_ext_free);
  G(lib_llama, llama_batch_ext_add_token);
  G(lib_llama, llama_batch_ext_add_embd);
  G(lib_llama, llama_batch_ext_set_pos);
  G(lib_llama, llama_batch_ext_set_output_logits);
  G(lib_llama, llama_process);
  G(lib_llama, llama_batch_ext_clear);
  G(lib_llama, llama_get_memory);
  G(lib_llama, llama_memory_seq_rm);
  G(lib_llama, llama_memory_seq_add);
#undef G
}

// ---- JSON output -----------------------------------------------------------------------------
static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; ++p) {
    if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
    else if (*p == '\n') fputs("\\n", f);
    else if (*p == '\t') fputs("\\t", f);
    else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
    else fputc(*p, f);
  }
  fputc('"', f);
}

// A float as JSON: %.9g round-trips float32; non-finite values become null.
static void json_float(FILE *f, float v) {
  if (v != v || v - v != 0.0f) fputs("null", f);
  else fprintf(f, "%.9g", (double)v);
}

// ---- llama.cpp's log (kept: the refusal messages of bad files are in it) ----------------------
static char *log_text;
static size_t log_len, log_cap;
static int log_echo;

static void on_log(enum ggml_log_level level, const char *text, void *ud) {
  (void)ud;
  (void)level;
  size_t n = strlen(text);
  if (log_len + n + 1 > log_cap) {
    log_cap = (log_len + n + 1) * 2;
    log_text = realloc(log_text, log_cap);
    if (!log_text) die("out of memory");
  }
  memcpy(log_text + log_len, text, n + 1);
  log_len += n;
  if (log_echo) fputs(text, stderr);
}

// The log's lines as a JSON array (the last `max` lines).
static void json_log(FILE *f, int max) {
  int lines = 0;
  for (size_t i = 0; i < log_len; ++i) lines += log_text[i] == '\n';
  int skip = lines > max ? lines - max : 0;
  fputc('[', f);
  int first = 1, line = 0;
  char *p = log_text;
  while (p && *p) {
    char *nl = strchr(p, '\n');
    if (nl) *nl = 0;
    if (line++ >= skip && *p) {
      if (!first) fputc(',', f);
      first = 0;
      json_str(f, p);
    }
    if (!nl) break;
    *nl = '\n';
    p = nl + 1;
  }
  fputc(']', f);
}

// ---- the CPU variant -------------------------------------------------------------------------
static int find_cpu_lib(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  if (info->dlpi_name && strstr(info->dlpi_name, "libggml-cpu")) {
    char *out = data;
    snprintf(out, 4096, "%s", info->dlpi_name);
  }
  return 0;
}

static void load_variant(const char *variant, char *used, size_t used_size) {
  if (strcmp(variant, "default") == 0) {
    p_ggml_backend_load_all();  // ggml's own choice: the highest-scoring CPU variant here
  } else {
    char path[4096];
    if (strchr(variant, '/')) snprintf(path, sizeof path, "%s", variant);
    else snprintf(path, sizeof path, "%s/libggml-cpu-%s.so", BACKENDS, variant);
    if (!p_ggml_backend_load(path)) die("ggml_backend_load(%s) failed", path);
  }
  char found[4096] = "";
  dl_iterate_phdr(find_cpu_lib, found);
  if (!found[0]) die("no libggml-cpu variant is loaded");
  snprintf(used, used_size, "%s", found);
}

typedef int (*score_fn)(void);

static void list_variants(void) {
  DIR *d = opendir(BACKENDS);
  if (!d) die("opendir %s: %s", BACKENDS, strerror(errno));
  struct dirent *e;
  printf("{");
  int first = 1;
  while ((e = readdir(d))) {
    if (strncmp(e->d_name, "libggml-cpu-", 12) != 0) continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", BACKENDS, e->d_name);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    int score = -1;
    if (h) {
      score_fn f = (score_fn)dlsym(h, "ggml_backend_score");
      score = f ? f() : -1;
      dlclose(h);
    }
    printf("%s\"%s\": %d", first ? "" : ", ", e->d_name, score);
    first = 0;
  }
  closedir(d);
  printf("}\n");
}

// ---- the blob --------------------------------------------------------------------------------
static FILE *blob;
static long blob_size;

typedef struct {
  long offset;
  long count;
  const char *type;
} Span;

static Span put(const void *data, size_t elem, long count, const char *type) {
  Span s = {blob_size, count, type};
  if (count > 0 && fwrite(data, elem, (size_t)count, blob) != (size_t)count) die("write nodes.bin: %s", strerror(errno));
  blob_size += (long)elem * count;
  return s;
}

static void json_span(FILE *f, const char *key, Span s) {
  fprintf(f, "\"%s\": {\"offset\": %ld, \"count\": %ld, \"type\": \"%s\"}", key, s.offset, s.count, s.type);
}

// Element (i0, i1, i2, i3) of a host tensor as float (F32 or F16).
static float elem(const struct ggml_tensor *t, const char *base, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
  const char *p = base + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
  if (t->type == GGML_TYPE_F32) {
    float v;
    memcpy(&v, p, 4);
    return v;
  }
  ggml_fp16_t h;
  memcpy(&h, p, 2);
  float v;
  p_ggml_fp16_to_fp32_row(&h, &v, 1);
  return v;
}

// t gathered to contiguous float [ne3][ne2][ne1][ne0].
static Span put_tensor(const struct ggml_tensor *t) {
  if (t->type != GGML_TYPE_F32 && t->type != GGML_TYPE_F16) die("tensor %s has type %d (F32/F16 expected)", t->name, t->type);
  if (!t->buffer || !p_ggml_backend_buffer_is_host(t->buffer)) die("tensor %s is not in host memory", t->name);
  const long n = (long)(t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3]);
  float *out = malloc(sizeof(float) * (size_t)(n ? n : 1));
  if (!out) die("out of memory");
  long k = 0;
  for (int64_t i3 = 0; i3 < t->ne[3]; ++i3)
    for (int64_t i2 = 0; i2 < t->ne[2]; ++i2)
      for (int64_t i1 = 0; i1 < t->ne[1]; ++i1)
        for (int64_t i0 = 0; i0 < t->ne[0]; ++i0) out[k++] = elem(t, t->data, i0, i1, i2, i3);
  Span s = put(out, 4, n, "f32");
  free(out);
  return s;
}

// ---- the rope nodes --------------------------------------------------------------------------
#define MAX_NODES 4096

typedef struct {
  char name[GGML_MAX_NAME];
  int32_t op_params[GGML_MAX_OP_PARAMS / 4];
  int64_t ne[4];
  size_t nb[4];
  int type;
  float corr[2];
  Span positions, freq_factors, input, output, parent;
  int has_freq_factors;
  int64_t freq_factors_ne;
  // src[0] a view: of which tensor, where
  int is_view;
  char view_src_name[GGML_MAX_NAME];
  int64_t view_src_ne[4];
  size_t view_src_nb[4];
  int view_src_op;
  size_t view_offs;
  int64_t parent_head, parent_offset;  // the parent's rows: head length (nb[1] / element), slice offset
  int in_place;
  int phase;
} Node;

static Node nodes[MAX_NODES];
static int n_nodes;
static long n_evals;
static int phase;  // 0: the first decode; 1: the one after a context shift

static int64_t elem_size(const struct ggml_tensor *t) { return t->type == GGML_TYPE_F32 ? 4 : 2; }

// Called before the rope node runs (every earlier node has run: see on_eval).
static void capture_input(struct ggml_tensor *t) {
  if (n_nodes == MAX_NODES) die("more than %d rope nodes", MAX_NODES);
  Node *n = &nodes[n_nodes];
  memset(n, 0, sizeof *n);
  struct ggml_tensor *a = t->src[0], *pos = t->src[1], *ff = t->src[2];
  snprintf(n->name, sizeof n->name, "%s", t->name);
  n->phase = phase;
  memcpy(n->op_params, t->op_params, sizeof n->op_params);
  for (int i = 0; i < 4; ++i) {
    n->ne[i] = a->ne[i];
    n->nb[i] = a->nb[i];
  }
  n->type = a->type;
  float fb, bf, bs;
  memcpy(&fb, &t->op_params[5], 4);
  memcpy(&bf, &t->op_params[9], 4);
  memcpy(&bs, &t->op_params[10], 4);
  p_ggml_rope_yarn_corr_dims(t->op_params[1], t->op_params[4], fb, bf, bs, n->corr);
  if (pos->type != GGML_TYPE_I32) die("%s: positions of type %d", t->name, pos->type);
  if (!p_ggml_backend_buffer_is_host(pos->buffer)) die("%s: positions not in host memory", t->name);
  n->positions = put(pos->data, 4, (long)pos->ne[0], "i32");
  if (ff) {
    if (ff->type != GGML_TYPE_F32) die("%s: freq factors of type %d", t->name, ff->type);
    n->has_freq_factors = 1;
    n->freq_factors_ne = ff->ne[0];
    n->freq_factors = put_tensor(ff);
  }
  n->input = put_tensor(a);
  n->in_place = t->data == a->data;
  if (a->view_src) {
    const struct ggml_tensor *v = a->view_src;
    n->is_view = 1;
    snprintf(n->view_src_name, sizeof n->view_src_name, "%s", v->name);
    for (int i = 0; i < 4; ++i) {
      n->view_src_ne[i] = v->ne[i];
      n->view_src_nb[i] = v->nb[i];
    }
    n->view_src_op = v->op;
    n->view_offs = a->view_offs;
    // A slice of each head (DeepSeek's q_pe / k_pe): the parent's full rows, for every (token,
    // head) of the view the nb[1] / element values of the head it slices, from where it starts.
    // (A reshape of a contiguous tensor is a view too, with nothing outside it: no rows then.)
    const int64_t es = elem_size(a);
    if (a->nb[0] == (size_t)es && a->nb[1] % es == 0 && a->nb[1] > (size_t)(a->ne[0] * es)) {
      const char *vbase = v->data;
      const char *abase = a->data;
      const size_t vbytes = (size_t)(v->nb[3] * v->ne[3]);
      const int64_t head = (int64_t)a->nb[1] / es;
      const int64_t off = (int64_t)((size_t)(abase - vbase) % a->nb[1]) / es;
      long count = (long)(head * a->ne[1] * a->ne[2] * a->ne[3]);
      float *rows = malloc(sizeof(float) * (size_t)(count ? count : 1));
      if (!rows) die("out of memory");
      long k = 0;
      int ok = 1;
      for (int64_t i3 = 0; i3 < a->ne[3] && ok; ++i3)
        for (int64_t i2 = 0; i2 < a->ne[2] && ok; ++i2)
          for (int64_t i1 = 0; i1 < a->ne[1] && ok; ++i1) {
            const char *start = abase - off * es + i1 * a->nb[1] + i2 * a->nb[2] + i3 * a->nb[3];
            if (start < vbase || start + head * es > vbase + vbytes) {
              ok = 0;
              break;
            }
            for (int64_t j = 0; j < head; ++j) {
              float x;
              if (a->type == GGML_TYPE_F32) memcpy(&x, start + j * 4, 4);
              else {
                ggml_fp16_t h;
                memcpy(&h, start + j * 2, 2);
                p_ggml_fp16_to_fp32_row(&h, &x, 1);
              }
              rows[k++] = x;
            }
          }
      if (ok) {
        n->parent_head = head;
        n->parent_offset = off;
        n->parent = put(rows, 4, count, "f32");
      }
      free(rows);
    }
  }
}

static int pending = -1;  // index of the node whose input is captured and output not yet

static bool on_eval(struct ggml_tensor *t, bool ask, void *ud) {
  (void)ud;
  if (ask) {
    // Observe EVERY node: the scheduler then computes one node at a time, so when it asks about a
    // rope node all earlier nodes have run and its input is still intact (ggml-alloc may let the
    // rope write over its input).
    if (t->op == GGML_OP_ROPE) {
      capture_input(t);
      pending = n_nodes++;
    }
    return true;
  }
  ++n_evals;
  if (t->op == GGML_OP_ROPE) {
    if (pending < 0 || strcmp(nodes[pending].name, t->name) != 0) die("rope node %s computed without its input captured", t->name);
    nodes[pending].output = put_tensor(t);
    pending = -1;
  }
  return true;
}

// ---- rope offset probe: where ggml_rope_set_offset keeps its offset in op_params ---------------
static int probe_offset_index(int *value_out) {
  struct ggml_init_params ip = {1 << 20, NULL, true};
  struct ggml_context *c = p_ggml_init(ip);
  if (!c) die("ggml_init failed");
  struct ggml_tensor *a = p_ggml_new_tensor_3d(c, GGML_TYPE_F32, 16, 2, 3);
  struct ggml_tensor *b = p_ggml_new_tensor_1d(c, GGML_TYPE_I32, 3);
  struct ggml_tensor *r = p_ggml_rope_ext(c, a, b, NULL, 4, 0, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f);
  int32_t before[GGML_MAX_OP_PARAMS / 4];
  memcpy(before, r->op_params, sizeof before);
  struct ggml_tensor *r2 = p_ggml_rope_set_offset(r, 7);
  int index = -1;
  for (int i = 0; i < GGML_MAX_OP_PARAMS / 4; ++i)
    if (r2->op_params[i] != before[i]) {
      index = i;
      *value_out = r2->op_params[i];
    }
  p_ggml_free(c);
  return index;
}

// The layers llama.cpp made sliding-window: its load log says "layer N assigned to device D, is_swa = S".
static void json_swa_layers(FILE *f, int n_layer) {
  fputc('[', f);
  int first = 1;
  for (const char *p = log_text; p && (p = strstr(p, "load_tensors: layer ")); ++p) {
    int layer = -1, swa = 0;
    const char *s = strstr(p, "is_swa = ");
    const char *nl = strchr(p, '\n');
    if (sscanf(p, "load_tensors: layer %d", &layer) != 1 || !s || (nl && s > nl)) continue;
    if (sscanf(s, "is_swa = %d", &swa) == 1 && swa && layer >= 0 && layer < n_layer) {
      fprintf(f, "%s%d", first ? "" : ", ", layer);
      first = 0;
    }
  }
  fputc(']', f);
}

// ---- main ------------------------------------------------------------------------------------
static uint64_t rng_state;
static uint32_t rng(void) {  // xorshift64*
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (uint32_t)((rng_state * 2685821657736338717ULL) >> 32);
}

static void usage(void) {
  fputs("usage: capture --model M.gguf --out DIR [--variant x64|default|PATH] [--n-ctx N] [--n-tokens T]\n"
        "               [--positions FILE] [--embd] [--seed S] [--threads N] [--shift D --keep K] [--verbose]\n"
        "       capture --variants\n"
        "       capture --load M.gguf [--variant ...]\n",
        stderr);
  exit(2);
}

static void json_meta(FILE *f, const struct llama_model *model) {
  fputc('{', f);
  char key[512], val[4096];
  const int n = p_llama_model_meta_count(model);
  int first = 1;
  for (int i = 0; i < n; ++i) {
    if (p_llama_model_meta_key_by_index(model, i, key, sizeof key) < 0) continue;
    if (p_llama_model_meta_val_str_by_index(model, i, val, sizeof val) < 0) continue;
    if (strncmp(key, "tokenizer.ggml.tokens", 21) == 0 || strncmp(key, "tokenizer.ggml.token_type", 25) == 0 ||
        strncmp(key, "tokenizer.ggml.merges", 21) == 0 || strncmp(key, "tokenizer.ggml.scores", 21) == 0)
      continue;
    if (!first) fputs(", ", f);
    first = 0;
    json_str(f, key);
    fputs(": ", f);
    json_str(f, val);
  }
  fputc('}', f);
}

int main(int argc, char **argv) {
  const char *model_path = NULL, *out_dir = NULL, *variant = "x64", *pos_file = NULL;
  int n_ctx = 4096, n_tokens = 1024, embd = 0, threads = 2, load_only = 0, shift = 0, keep = -1;
  unsigned long long seed = 1;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--variants")) {
      load_libraries();
      list_variants();
      return 0;
    } else if (!strcmp(a, "--embd")) embd = 1;
    else if (!strcmp(a, "--verbose")) log_echo = 1;
    else if (!v) usage();
    else if (!strcmp(a, "--model")) model_path = argv[++i];
    else if (!strcmp(a, "--load")) { model_path = argv[++i]; load_only = 1; }
    else if (!strcmp(a, "--out")) out_dir = argv[++i];
    else if (!strcmp(a, "--variant")) variant = argv[++i];
    else if (!strcmp(a, "--positions")) pos_file = argv[++i];
    else if (!strcmp(a, "--n-ctx")) n_ctx = atoi(argv[++i]);
    else if (!strcmp(a, "--n-tokens")) n_tokens = atoi(argv[++i]);
    else if (!strcmp(a, "--seed")) seed = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(a, "--threads")) threads = atoi(argv[++i]);
    else if (!strcmp(a, "--shift")) shift = atoi(argv[++i]);
    else if (!strcmp(a, "--keep")) keep = atoi(argv[++i]);
    else usage();
  }
  if (!model_path || (!out_dir && !load_only) || n_ctx < 1 || n_tokens < 1 || threads < 1) usage();
  if (shift < 0 || (shift > 0) != (keep >= 0) || (shift > 0 && (keep + shift >= n_tokens || embd || pos_file))) usage();
  rng_state = seed * 0x9E3779B97F4A7C15ULL + 1;

  load_libraries();
  p_llama_log_set(on_log, NULL);
  char used[4096];
  load_variant(variant, used, sizeof used);
  p_llama_backend_init();

  struct llama_model_params mp = p_llama_model_default_params();
  mp.n_gpu_layers = 0;
  struct llama_model *model = p_llama_model_load_from_file(model_path, mp);
  if (load_only) {
    printf("{\"loaded\": %s, \"variant\": ", model ? "true" : "false");
    json_str(stdout, used);
    printf(", \"log\": ");
    json_log(stdout, 400);
    printf("}\n");
    if (model) p_llama_model_free(model);
    return 0;
  }
  if (!model) {
    fputs(log_text ? log_text : "", stderr);
    die("llama_model_load_from_file(%s) failed", model_path);
  }

  // Positions: the file's, or 0 … n_tokens-1.
  int32_t *pos = NULL;
  int n_pos_per_token = 1;
  if (pos_file) {
    FILE *pf = fopen(pos_file, "rb");
    if (!pf) die("open %s: %s", pos_file, strerror(errno));
    fseek(pf, 0, SEEK_END);
    long bytes = ftell(pf);
    fseek(pf, 0, SEEK_SET);
    if (bytes <= 0 || bytes % (4L * n_tokens) != 0) die("%s: %ld bytes is not n_tokens = %d × k int32", pos_file, bytes, n_tokens);
    n_pos_per_token = (int)(bytes / (4L * n_tokens));
    pos = malloc((size_t)bytes);
    if (!pos || fread(pos, 1, (size_t)bytes, pf) != (size_t)bytes) die("read %s", pos_file);
    fclose(pf);
  } else {
    pos = malloc(sizeof(int32_t) * (size_t)n_tokens);
    if (!pos) die("out of memory");
    for (int i = 0; i < n_tokens; ++i) pos[i] = i;
  }

  struct llama_context_params cp = p_llama_context_default_params();
  cp.n_ctx = (uint32_t)n_ctx;
  cp.n_batch = (uint32_t)n_tokens;
  cp.n_ubatch = (uint32_t)n_tokens;  // one ubatch: every rope node runs once per layer
  cp.n_seq_max = 1;
  cp.n_threads = threads;
  cp.n_threads_batch = threads;
  if (shift > 0) {
    cp.type_k = GGML_TYPE_F32;
    cp.type_v = GGML_TYPE_F32;
  }
  cp.cb_eval = on_eval;
  cp.cb_eval_user_data = NULL;
  cp.no_perf = true;
  struct llama_context *ctx = p_llama_init_from_model(model, cp);
  if (!ctx) {
    fputs(log_text ? log_text : "", stderr);
    die("llama_init_from_model failed");
  }

  const int n_embd = p_llama_model_n_embd(model);
  const int n_vocab = p_llama_vocab_n_tokens(p_llama_model_get_vocab(model));
  struct llama_batch_ext *batch = p_llama_batch_ext_init(ctx);
  if (!batch) die("llama_batch_ext_init failed");
  float *emb = NULL;
  if (embd) {
    emb = malloc(sizeof(float) * (size_t)n_embd * (size_t)n_tokens);
    if (!emb) die("out of memory");
    for (long i = 0; i < (long)n_embd * n_tokens; ++i) emb[i] = (float)((double)rng() / 4294967296.0 * 2.0 - 1.0);
  }
  for (int i = 0; i < n_tokens; ++i) {
    int32_t idx;
    if (embd) {
      struct llama_embd e = {emb + (size_t)i * n_embd, 1, (size_t)n_embd};
      idx = p_llama_batch_ext_add_embd(batch, 0, e);
    } else {
      idx = p_llama_batch_ext_add_token(batch, 0, (llama_token)(rng() % (uint32_t)n_vocab));
    }
    if (idx < 0) die("llama_batch_ext_add at token %d: %d", i, idx);
    if (!p_llama_batch_ext_set_pos(batch, idx, pos + (size_t)i * n_pos_per_token)) die("llama_batch_ext_set_pos at token %d failed", i);
  }
  p_llama_batch_ext_set_output_logits(batch, n_tokens - 1, true);

  char path[4096];
  snprintf(path, sizeof path, "%s", out_dir);
  for (char *q = path + 1; *q; ++q)
    if (*q == '/') {
      *q = 0;
      mkdir(path, 0755);
      *q = '/';
    }
  if (mkdir(path, 0755) != 0 && errno != EEXIST) die("mkdir %s: %s", path, strerror(errno));
  snprintf(path, sizeof path, "%s/nodes.bin", out_dir);
  blob = fopen(path, "wb");
  if (!blob) die("open %s: %s", path, strerror(errno));
  const int rc = p_llama_process(ctx, LLAMA_PROCESS_TYPE_DECODE, batch);
  if (rc != 0) {
    fputs(log_text ? log_text : "", stderr);
    die("llama_process(DECODE) returned %d", rc);
  }
  if (pending >= 0) die("rope node %s: output never computed", nodes[pending].name);
  if (shift > 0) {
    llama_memory_t mem = p_llama_get_memory(ctx);
    if (!p_llama_memory_seq_rm(mem, 0, keep, keep + shift)) die("llama_memory_seq_rm(0, %d, %d) refused", keep, keep + shift);
    p_llama_memory_seq_add(mem, 0, keep + shift, -1, -shift);
    phase = 1;
    p_llama_batch_ext_clear(batch);
    const int32_t next = n_tokens - shift;
    const int32_t idx = p_llama_batch_ext_add_token(batch, 0, (llama_token)(rng() % (uint32_t)n_vocab));
    if (idx < 0 || !p_llama_batch_ext_set_pos(batch, idx, &next)) die("the token after the shift: llama_batch_ext_add/set_pos failed");
    p_llama_batch_ext_set_output_logits(batch, idx, true);
    const int rc2 = p_llama_process(ctx, LLAMA_PROCESS_TYPE_DECODE, batch);
    if (rc2 != 0) {
      fputs(log_text ? log_text : "", stderr);
      die("llama_process(DECODE) after the shift returned %d", rc2);
    }
    if (pending >= 0) die("rope node %s: output never computed", nodes[pending].name);
  }
  if (fclose(blob) != 0) die("close nodes.bin");

  int offset_value = 0;
  const int offset_index = probe_offset_index(&offset_value);

  snprintf(path, sizeof path, "%s/nodes.json", out_dir);
  FILE *f = fopen(path, "w");
  if (!f) die("open %s: %s", path, strerror(errno));
  char desc[256];
  p_llama_model_desc(model, desc, sizeof desc);
  fprintf(f, "{\n\"llamaVersion\": ");
  json_str(f, p_llama_version());
  fprintf(f, ", \"ggmlVersion\": ");
  json_str(f, p_ggml_version());
  fprintf(f, ", \"ggmlCommit\": ");
  json_str(f, p_ggml_commit());
  fprintf(f, ",\n\"variant\": ");
  json_str(f, used);
  fprintf(f, ", \"requestedVariant\": ");
  json_str(f, variant);
  // The loaded CPU backend's own feature list (FMA, AVX2, …).
  fprintf(f, ", \"features\": {");
  int firstf = 1;
  for (size_t r = 0; r < p_ggml_backend_reg_count(); ++r) {
    ggml_backend_reg_t reg = p_ggml_backend_reg_get(r);
    typedef struct ggml_backend_feature *(*features_fn)(ggml_backend_reg_t);
    features_fn get = (features_fn)p_ggml_backend_reg_get_proc_address(reg, "ggml_backend_get_features");
    if (!get) continue;
    for (struct ggml_backend_feature *ft = get(reg); ft && ft->name; ++ft) {
      fprintf(f, "%s", firstf ? "" : ", ");
      firstf = 0;
      json_str(f, ft->name);
      fputs(": ", f);
      json_str(f, ft->value);
    }
  }
  fprintf(f, "}, \"backends\": [");
  for (size_t r = 0; r < p_ggml_backend_reg_count(); ++r) {
    fprintf(f, "%s", r ? ", " : "");
    json_str(f, p_ggml_backend_reg_name(p_ggml_backend_reg_get(r)));
  }
  fprintf(f, "], \"devices\": [");
  for (size_t d = 0; d < p_ggml_backend_dev_count(); ++d) {
    ggml_backend_dev_t dev = p_ggml_backend_dev_get(d);
    fprintf(f, "%s[", d ? ", " : "");
    json_str(f, p_ggml_backend_dev_name(dev));
    fputs(", ", f);
    json_str(f, p_ggml_backend_dev_description(dev));
    fputc(']', f);
  }
  fprintf(f, "],\n\"systemInfo\": ");
  json_str(f, p_llama_print_system_info());
  fprintf(f, ",\n\"model\": ");
  json_str(f, model_path);
  fprintf(f, ", \"desc\": ");
  json_str(f, desc);
  fprintf(f, ", \"ropeType\": %d, \"nCtxTrain\": %d, \"nEmbd\": %d, \"nLayer\": %d, \"nHead\": %d, \"nHeadKv\": %d, \"nSwa\": %d, \"ropeFreqScaleTrain\": ",
          (int)p_llama_model_rope_type(model), p_llama_model_n_ctx_train(model), n_embd, p_llama_model_n_layer(model),
          p_llama_model_n_head(model), p_llama_model_n_head_kv(model), p_llama_model_n_swa(model));
  json_float(f, p_llama_model_rope_freq_scale_train(model));
  fprintf(f, ",\n\"nCtx\": %u, \"nCtxSeq\": %u, \"nTokens\": %d, \"embd\": %s, \"nPosPerToken\": %d, \"threads\": %d, \"seed\": %llu, \"evaluations\": %ld,\n",
          p_llama_n_ctx(ctx), p_llama_n_ctx_seq(ctx), n_tokens, embd ? "true" : "false", n_pos_per_token, threads, seed, n_evals);
  fprintf(f, "\"ropeOffsetParam\": {\"index\": %d, \"probe\": %d},\n", offset_index, offset_value);
  if (shift > 0) fprintf(f, "\"shift\": {\"delta\": %d, \"keep\": %d},\n", shift, keep);
  fprintf(f, "\"swaLayers\": ");
  json_swa_layers(f, p_llama_model_n_layer(model));
  fprintf(f, ",\n");
  fprintf(f, "\"meta\": ");
  json_meta(f, model);
  fprintf(f, ",\n\"nodes\": [\n");
  for (int i = 0; i < n_nodes; ++i) {
    const Node *n = &nodes[i];
    float fp[6];
    memcpy(fp, &n->op_params[5], sizeof fp);
    fprintf(f, "%s{\"name\": ", i ? ",\n" : "");
    json_str(f, n->name);
    const char *dash = strrchr(n->name, '-');
    fprintf(f, ", \"layer\": %d, \"phase\": %d", dash ? atoi(dash + 1) : -1, n->phase);
    fprintf(f, ", \"opParams\": [");
    for (int k = 0; k < GGML_MAX_OP_PARAMS / 4; ++k) fprintf(f, "%s%d", k ? ", " : "", n->op_params[k]);
    fprintf(f, "], \"nDims\": %d, \"mode\": %d, \"nCtxOrig\": %d", n->op_params[1], n->op_params[2], n->op_params[4]);
    const char *names[6] = {"freqBase", "freqScale", "extFactor", "attnFactor", "betaFast", "betaSlow"};
    for (int k = 0; k < 6; ++k) {
      fprintf(f, ", \"%s\": ", names[k]);
      json_float(f, fp[k]);
    }
    fprintf(f, ", \"sections\": [%d, %d, %d, %d]", n->op_params[11], n->op_params[12], n->op_params[13], n->op_params[14]);
    fprintf(f, ", \"ropeOffset\": %d", offset_index >= 0 ? n->op_params[offset_index] : 0);
    fprintf(f, ", \"corrDims\": [");
    json_float(f, n->corr[0]);
    fputs(", ", f);
    json_float(f, n->corr[1]);
    fprintf(f, "], \"ne\": [%lld, %lld, %lld, %lld], \"nb\": [%zu, %zu, %zu, %zu], \"type\": %d, \"inPlace\": %s, ",
            (long long)n->ne[0], (long long)n->ne[1], (long long)n->ne[2], (long long)n->ne[3], n->nb[0], n->nb[1], n->nb[2], n->nb[3],
            n->type, n->in_place ? "true" : "false");
    json_span(f, "positions", n->positions);
    if (n->has_freq_factors) {
      fputs(", ", f);
      json_span(f, "freqFactors", n->freq_factors);
    }
    fputs(", ", f);
    json_span(f, "input", n->input);
    fputs(", ", f);
    json_span(f, "output", n->output);
    if (n->is_view) {
      fprintf(f, ", \"view\": {\"src\": ");
      json_str(f, n->view_src_name);
      fprintf(f, ", \"srcOp\": %d, \"srcNe\": [%lld, %lld, %lld, %lld], \"srcNb\": [%zu, %zu, %zu, %zu], \"offs\": %zu", n->view_src_op,
              (long long)n->view_src_ne[0], (long long)n->view_src_ne[1], (long long)n->view_src_ne[2], (long long)n->view_src_ne[3],
              n->view_src_nb[0], n->view_src_nb[1], n->view_src_nb[2], n->view_src_nb[3], n->view_offs);
      if (n->parent.count) {
        fprintf(f, ", \"head\": %lld, \"offsetInHead\": %lld, ", (long long)n->parent_head, (long long)n->parent_offset);
        json_span(f, "rows", n->parent);
      }
      fputc('}', f);
    }
    fputc('}', f);
  }
  fprintf(f, "\n],\n\"log\": ");
  json_log(f, 200);
  fprintf(f, "\n}\n");
  if (fclose(f) != 0) die("close nodes.json");

  p_llama_batch_ext_free(batch);
  p_llama_free(ctx);
  p_llama_model_free(model);
  p_llama_backend_free();
  free(pos);
  free(emb);
  return 0;
}
