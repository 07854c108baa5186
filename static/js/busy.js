// A busy state for every htmx request a person starts (a click, a submit, typing).
// - The button that sent the request is disabled at once, so a second click sends nothing,
//   and enabled again (with its focus back) when the answer comes.
// - If the answer takes longer than DELAY_MS, the request's target is marked aria-busy and
//   the notice #busy (a live region, so screen readers say it) shows its text, which the
//   page gives translated in its data-text attribute.
// All of it ends with the request: answered, failed, aborted or timed out (htmx sends
// htmx:afterRequest in each case). Background requests (polling, loading) change nothing.
(function () {
  "use strict";

  var DELAY_MS = 300;
  var requests = new WeakMap(); // the request (XMLHttpRequest) -> what was changed for it
  var slow = 0; // requests whose notice is showing

  function cause(detail) {
    return detail.requestConfig ? detail.requestConfig.triggeringEvent : null;
  }

  function inBackground(detail) {
    var event = cause(detail);
    return !event || event.type === "load" || event.type === "revealed" || event.type === "intersect";
  }

  function sender(detail) {
    var event = cause(detail);
    if (event && event.submitter) return event.submitter;
    var elt = detail.elt;
    var isButton = elt && elt.matches && elt.matches("button, input[type=submit], input[type=button]");
    return isButton ? elt : null;
  }

  function notice(showing) {
    var busy = document.getElementById("busy");
    if (busy) busy.textContent = showing ? busy.getAttribute("data-text") : "";
  }

  document.addEventListener("htmx:beforeRequest", function (event) {
    var detail = event.detail;
    if (!detail || !detail.xhr || inBackground(detail)) return;
    var state = { button: null, focused: false, target: detail.target, timer: 0, shown: false };
    var button = sender(detail);
    if (button && !button.disabled) {
      state.button = button;
      state.focused = document.activeElement === button;
      button.disabled = true;
    }
    state.timer = window.setTimeout(function () {
      state.shown = true;
      slow += 1;
      if (state.target) state.target.setAttribute("aria-busy", "true");
      notice(true);
    }, DELAY_MS);
    requests.set(detail.xhr, state);
  });

  document.addEventListener("htmx:afterRequest", function (event) {
    var detail = event.detail;
    var state = detail && detail.xhr ? requests.get(detail.xhr) : null;
    if (!state) return;
    requests.delete(detail.xhr);
    window.clearTimeout(state.timer);
    var button = state.button;
    if (button) {
      button.disabled = false;
      var lost = !document.activeElement || document.activeElement === document.body;
      if (state.focused && lost && document.body.contains(button)) button.focus();
    }
    if (state.shown) {
      slow -= 1;
      if (state.target) state.target.removeAttribute("aria-busy");
      if (!slow) notice(false);
    }
  });
})();
