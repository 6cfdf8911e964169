// Numbers as the views print them: read-out values, CSV text, and 2π.
export const TWO_PI = 2 * Math.PI;

/** A read-out number: `digits` decimals, or as many significant digits in exponent form. */
export function fmt(v, digits = 6) {
  if (v === -Infinity) return '−∞';
  if (!Number.isFinite(v)) return String(v);
  const exponent = Math.abs(v) >= 1e5 || (Math.abs(v) < 1e-4 && v !== 0);
  return exponent ? v.toExponential(Math.min(digits, 3)) : v.toFixed(digits);
}

export function csvLines(header, rows) {
  return `${header.join(',')}\n${rows.map((r) => r.join(',')).join('\n')}\n`;
}

/** A size in bytes as KiB, MiB or GiB (1024-based), to a decimal or two. */
export const bytesText = (b) => (b >= 2 ** 30 ? `${fmt(b / 2 ** 30, 2)} GiB` : b >= 2 ** 20 ? `${fmt(b / 2 ** 20, 1)} MiB`
  : `${fmt(b / 1024, 1)} KiB`);

/** k as an English ordinal: 1st, 2nd, 3rd, 4th, 11th, 101st. */
export const nth = (k) => `${k}${k % 100 >= 11 && k % 100 <= 13 ? 'th' : ['th', 'st', 'nd', 'rd'][k % 10] ?? 'th'}`;
