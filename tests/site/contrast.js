// WCAG contrast of an element's text against the first opaque background behind it (the site tests).
const rgb = (s) => s.match(/[\d.]+/g).map(Number);
const linear = (c) => ((c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
const lum = ([r, g, b]) => 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
function background(el) {
  for (let e = el; e; e = e.parentElement) {
    const c = rgb(getComputedStyle(e).backgroundColor);
    if (c.length < 4 || c[3] > 0) return c;
  }
  return [255, 255, 255];
}
function contrast(el) {
  const a = lum(rgb(getComputedStyle(el).color)), b = lum(background(el));
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}
