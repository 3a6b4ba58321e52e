// CPython 3.11's random.Random, only as far as the deals use it (R8a): seeding from a str,
// getrandbits(k) for k <= 32, randrange(n) and shuffle. The server deals with
// `random.Random(f"aluette:{seed}:deal:{n}").shuffle(pack)` (server/game/rules.py), so a
// page that replays the deals needs the same Mersenne Twister, bit for bit: this is
// Modules/_randommodule.c (init_genrand, init_by_array, genrand_uint32) and Lib/random.py
// (seed version 2, _randbelow_with_getrandbits, randrange, shuffle). Seeding hashes with
// SHA-512, so it is asynchronous (crypto.subtle); drawing is not.

const N = 624;
const M = 397;
const MATRIX_A = 0x9908b0df;
const UPPER_MASK = 0x80000000;
const LOWER_MASK = 0x7fffffff;

/**
 * random.seed(text, version=2) turns a str into an int: its UTF-8 bytes followed by their
 * SHA-512 digest, read big-endian. The C seed then takes that int's 32-bit words, least
 * significant first (one zero word for zero).
 */
export async function seedWords(text) {
  const bytes = new TextEncoder().encode(text);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-512", bytes));
  let a = 0n;
  for (const b of [...bytes, ...digest]) a = (a << 8n) | BigInt(b);
  const words = [];
  for (; a > 0n; a >>= 32n) words.push(Number(a & 0xffffffffn));
  return words.length ? words : [0];
}

export class PyRandom {
  /** `random.Random(text)`, for a str: await PyRandom.fromString(text). */
  static async fromString(text) {
    return new PyRandom(await seedWords(text));
  }

  /** init_by_array(key): the C seed from the key's 32-bit words. */
  constructor(key) {
    const mt = new Uint32Array(N);
    mt[0] = 19650218;                                   // init_genrand(19650218)
    for (let i = 1; i < N; i++) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = Math.imul(1812433253, prev) + i;
    }
    let i = 1;
    let j = 0;
    for (let k = Math.max(N, key.length); k > 0; k--) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = (mt[i] ^ Math.imul(prev, 1664525)) + key[j] + j;     // non linear
      i++;
      j++;
      if (i >= N) { mt[0] = mt[N - 1]; i = 1; }
      if (j >= key.length) j = 0;
    }
    for (let k = N - 1; k > 0; k--) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = (mt[i] ^ Math.imul(prev, 1566083941)) - i;           // non linear
      i++;
      if (i >= N) { mt[0] = mt[N - 1]; i = 1; }
    }
    mt[0] = 0x80000000;                                 // MSB is 1: a non-zero state
    this.mt = mt;
    this.index = N;
  }

  /** genrand_uint32: the next 32 bits, tempered (a Uint32Array wraps every sum). */
  genrandUint32() {
    const mt = this.mt;
    if (this.index >= N) {
      let kk = 0;
      const twist = (a, b, c) => {
        const y = (mt[a] & UPPER_MASK) | (mt[b] & LOWER_MASK);
        mt[a] = mt[c] ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
      };
      for (; kk < N - M; kk++) twist(kk, kk + 1, kk + M);
      for (; kk < N - 1; kk++) twist(kk, kk + 1, kk + M - N);
      twist(N - 1, 0, M - 1);
      this.index = 0;
    }
    let y = mt[this.index++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** getrandbits(k), 0 <= k <= 32: the top k bits of one draw (k = 0 draws nothing). */
  getrandbits(k) {
    if (!Number.isInteger(k) || k < 0 || k > 32) {
      throw new RangeError("getrandbits: 0 <= k <= 32");
    }
    if (k === 0) return 0;
    return this.genrandUint32() >>> (32 - k);
  }

  /** _randbelow_with_getrandbits(n), 1 <= n <= 2**32 - 1: draw n.bit_length() bits until
   *  the value is below n. */
  randbelow(n) {
    if (!Number.isInteger(n) || n < 1 || n > 0xffffffff) {
      throw new RangeError("randbelow: 1 <= n < 2**32");
    }
    const k = 32 - Math.clz32(n);
    let r = this.getrandbits(k);
    while (r >= n) r = this.getrandbits(k);
    return r;
  }

  /** randrange(n) with one argument, n >= 1. */
  randrange(n) {
    return this.randbelow(n);
  }

  /** shuffle(x) in place: from the last index down to 1, swap with a draw below i + 1. */
  shuffle(x) {
    for (let i = x.length - 1; i > 0; i--) {
      const j = this.randbelow(i + 1);
      [x[i], x[j]] = [x[j], x[i]];
    }
    return x;
  }
}
