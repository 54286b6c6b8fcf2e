/**
 * The groups of a grouped bar chart whose every bar is 0. Such a group draws nothing at all, and
 * an empty slot reads as missing data: the chart labels it, and its accessible name lists it.
 */
export function zeroGroupIndexes(
  groupCount: number,
  series: readonly (readonly unknown[])[],
): number[] {
  const indexes: number[] = [];
  if (series.length === 0) return indexes;
  for (let i = 0; i < groupCount; i++)
    if (series.every((values) => Number(values[i] ?? 0) === 0)) indexes.push(i);
  return indexes;
}

/** The label a zero group gets: "all 0" where it fits, else "0". */
export function zeroGroupText(groupWidthPx: number): string {
  return groupWidthPx >= 40 ? 'all 0' : '0';
}
