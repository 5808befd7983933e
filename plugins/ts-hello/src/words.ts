// Word statistics for ts-hello, in a module of its own to show that the
// build bundles local imports and that errors name this file.

export interface WordStats {
  words: number;
  distinct: number;
  top: { word: string; count: number }[];
}

export function wordStats(text: string, top: number): WordStats {
  const counts = new Map<string, number>();
  let words = 0;
  for (const match of text.toLowerCase().matchAll(/[\p{L}\p{N}']+/gu)) {
    words++;
    counts.set(match[0], (counts.get(match[0]) ?? 0) + 1);
  }
  const sorted = [...counts].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1));
  return { words, distinct: counts.size, top: sorted.slice(0, top).map(([word, count]) => ({ word, count })) };
}

export function checkedDivide(a: number, b: number): number {
  if (b === 0) {
    throw new RangeError("division by zero");
  }
  return a / b;
}
