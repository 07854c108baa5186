// The copy button beside a raw API key (templates/accounts/api_key_created.html).
// Without JavaScript the button stays hidden and the key is selectable text in a readonly
// field. The outcome is said in the #copy-status live region.
(function () {
  "use strict";

  function say(text) {
    var status = document.getElementById("copy-status");
    if (status) status.textContent = text;
  }

  function copyBySelection(field) {
    field.focus();
    field.select();
    try {
      return document.execCommand("copy");
    } catch (error) {
      return false;
    }
  }

  function setUp(button) {
    var field = document.getElementById(button.getAttribute("data-copy"));
    if (!field) return;
    button.hidden = false;
    button.addEventListener("click", function () {
      var copied = button.getAttribute("data-copied") || "";
      var failed = button.getAttribute("data-failed") || "";
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(field.value).then(
          function () { say(copied); },
          function () { say(copyBySelection(field) ? copied : failed); }
        );
      } else {
        say(copyBySelection(field) ? copied : failed);
      }
    });
    // A click in the field selects all of it: the key is copied whole or not at all.
    field.addEventListener("focus", function () { field.select(); });
  }

  function init() {
    Array.prototype.forEach.call(document.querySelectorAll("button[data-copy]"), setUp);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
