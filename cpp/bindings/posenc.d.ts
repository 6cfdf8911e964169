// Type declarations for the posenc npm package (hand-written; keep in step with api.js).

/** The largest result one call may return, in float32 elements (2^28 = 1 GiB). */
export declare const MAX_ELEMENTS: number;

export interface InitOptions {
  /** The module's bytes, if you already have them (skips reading or fetching posenc.wasm). */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /** Browser only: where to fetch posenc.wasm from (default: next to the package's browser.js). */
  wasmUrl?: string | URL;
}

export interface SinusoidalOptions {
  /** The base of the geometric frequency series; default 10000 (Vaswani et al. 2017). */
  base?: number;
}

export interface Posenc {
  /** The SIMD instruction set the kernels were compiled for: "wasm" (SIMD128). */
  readonly simdArch: string;
  /** Same as the package's MAX_ELEMENTS export. */
  readonly MAX_ELEMENTS: number;
  /**
   * The sinusoidal table, row-major [seqLen][dModel], positions 0 … seqLen-1:
   * PE[p][2i] = sin(p / base^(2i/dModel)), PE[p][2i+1] = cos(same).
   * @throws TypeError for a non-number argument or an unknown option.
   * @throws RangeError for a non-integer or < 1 size, a non-finite or <= 0 base, or a result over MAX_ELEMENTS.
   */
  sinusoidal(seqLen: number, dModel: number, options?: SinusoidalOptions): Float32Array;
}

/** Loads and instantiates the WebAssembly module. Call once and keep the result. */
export declare function init(options?: InitOptions): Promise<Posenc>;
