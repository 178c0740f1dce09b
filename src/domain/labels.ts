/** "oil_change" → "Oil change": the display form of an alert or item type. */
export function typeLabel(type: string): string {
  const words = type.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}
