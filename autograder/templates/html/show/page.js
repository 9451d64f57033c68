window.__errors = [];
window.addEventListener('error', function (e) { window.__errors.push(String(e.message || 'error')); });
window.addEventListener('load', function () {
  var widths = [];
  document.querySelectorAll('img').forEach(function (img) {
    widths.push(img.naturalWidth);
    if (!img.naturalWidth) { img.insertAdjacentText('afterend', ' (image missing)'); }
  });
  document.documentElement.setAttribute('data-images', widths.join(','));
  document.documentElement.setAttribute('data-errors', String(window.__errors.length));
});
