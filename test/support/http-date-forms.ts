const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** One instant written in each of the three HTTP-date forms of RFC 9110 section 5.6.7. */
export function httpDateForms(ms: number): { imfFixdate: string; rfc850: string; asctime: string } {
  const d = new Date(ms);
  const two = (n: number): string => String(n).padStart(2, '0');
  const time = `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
  const day = DAYS[d.getUTCDay()]!;
  const month = MONTHS[d.getUTCMonth()]!;
  const year = String(d.getUTCFullYear()).padStart(4, '0');
  return {
    imfFixdate: `${day.slice(0, 3)}, ${two(d.getUTCDate())} ${month} ${year} ${time} GMT`,
    rfc850: `${day}, ${two(d.getUTCDate())}-${month}-${year.slice(-2)} ${time} GMT`,
    asctime: `${day.slice(0, 3)} ${month} ${String(d.getUTCDate()).padStart(2, ' ')} ${time} ${year}`,
  };
}
