// The copy button beside a text shown once in a readonly field: a raw API key, a privacy
// portal link, a member's set-password link (button[data-copy="<field id>"]).
// Without JavaScript the button stays hidden and the text is selectable in its field.
// The outcome is said in the #copy-status live region, again on each click.
(function () {
  "use strict";

  function say(text) {
    var status = document.getElementById("copy-status");
    if (!status) return;
    // Emptied first, so that a second click is announced again.
    status.textContent = "";
    window.setTimeout(function () { status.textContent = text; }, 50);
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
