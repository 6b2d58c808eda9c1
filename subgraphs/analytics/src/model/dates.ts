/** Calendar arithmetic in UTC for due dates (a year from 29 February ends on 28 February). */
export function addYearsUtc(at: Date, years: number): Date {
  const y = at.getUTCFullYear() + years;
  const last = new Date(Date.UTC(y, at.getUTCMonth() + 1, 0)).getUTCDate();
  return new Date(
    Date.UTC(y, at.getUTCMonth(), Math.min(at.getUTCDate(), last), at.getUTCHours(), at.getUTCMinutes(), at.getUTCSeconds(), at.getUTCMilliseconds()),
  );
}

export function addDaysUtc(at: Date, days: number): Date {
  return new Date(at.getTime() + days * 86_400_000);
}
