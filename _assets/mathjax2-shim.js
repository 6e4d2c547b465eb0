// ipywidgets 8 typesets widget labels with MathJax 2's API, MathJax.Hub.Queue(["Typeset", MathJax.Hub, el]);
// the site ships MathJax 3, which has no Hub, so every page with a labelled widget threw a TypeError.
// This shim gives whatever object is (or later becomes) window.MathJax a Hub.Queue that calls MathJax 3's
// typesetPromise, after MathJax has started. It must load before MathJax and the widget manager.
(function () {
  var current = window.MathJax;
  function withHub(mathjax) {
    if (mathjax && typeof mathjax === "object" && !mathjax.Hub) {
      Object.defineProperty(mathjax, "Hub", {
        enumerable: false,  // not a MathJax 3 configuration option
        value: {
          Queue: function (job) {
            var element = job && job[2];
            var typeset = function () {
              if (window.MathJax.typesetPromise) window.MathJax.typesetPromise(element ? [element] : undefined);
            };
            var started = window.MathJax.startup && window.MathJax.startup.promise;
            if (started) started.then(typeset); else typeset();
          },
        },
      });
    }
    return mathjax;
  }
  Object.defineProperty(window, "MathJax", {
    configurable: true,
    get: function () { return current; },
    set: function (value) { current = withHub(value); },
  });
  withHub(current);
})();
