// The dashboard's small enhancements; every page works without them.
// - Review queue: j/k move, a/c/e/r/m/o/x act on the focused item, ? shows the shortcuts.
//   Shortcuts never fire while typing in a field.
// - Ctrl+Enter submits the form being typed in.
// - htmx swaps are announced in the live region #announce.
// - The browser's time zone is kept in a cookie, so the server dates pages in it.
// - A fold marked data-open-wide (the explorer's filters) opens on a wide screen; on a phone
//   it stays as the server sent it (folded unless a filter is set).
// - On a phone the menus open from their buttons.
(function () {
  "use strict";

  if (window.matchMedia && window.matchMedia("(min-width: 40.01rem)").matches) {
    Array.prototype.forEach.call(document.querySelectorAll("details[data-open-wide]"), function (fold) {
      fold.open = true;
    });
  }

  // Dates on pages in the viewer's time zone: the server reads this cookie.
  try {
    var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (zone && /^[A-Za-z0-9_+\-\/]+$/.test(zone) && document.cookie.indexOf("tz=" + zone) < 0) {
      document.cookie = "tz=" + zone + "; path=/; max-age=31536000; SameSite=Lax";
    }
  } catch (error) { /* no Intl: the server's zone, shown beside each time */ }

  // On a phone a menu folds behind its button (the CSS hides the menu while the button says
  // aria-expanded=false; on a wide screen the button is not shown). Without this script the
  // button stays hidden and the menu wraps, every item in sight. Escape folds it again.
  var toggles = Array.prototype.slice.call(document.querySelectorAll("button.menu-toggle[aria-controls]"));
  toggles.forEach(function (button) {
    button.hidden = false;
    button.addEventListener("click", function () {
      button.setAttribute("aria-expanded", button.getAttribute("aria-expanded") === "true" ? "false" : "true");
    });
  });
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") return;
    toggles.forEach(function (button) {
      var menu = document.getElementById(button.getAttribute("aria-controls"));
      if (button.getAttribute("aria-expanded") !== "true" || !menu || !menu.contains(document.activeElement)) return;
      button.setAttribute("aria-expanded", "false");
      button.focus();
    });
  });

  function typing(target) {
    if (!target || !target.closest) return false;
    return Boolean(target.closest("input, textarea, select, [contenteditable]:not([contenteditable=false])"));
  }

  function items() {
    return Array.prototype.slice.call(document.querySelectorAll(".queue-item"));
  }

  function open() {
    return items().filter(function (item) { return !item.classList.contains("done"); });
  }

  function current() {
    var active = document.activeElement;
    return active && active.closest ? active.closest(".queue-item") : null;
  }

  function move(step) {
    var list = items();
    if (!list.length) return;
    var index = list.indexOf(current());
    var next = index < 0 ? 0 : Math.min(Math.max(index + step, 0), list.length - 1);
    list[next].focus();
    list[next].scrollIntoView({ block: "nearest" });
  }

  function act(key) {
    var item = current() || open()[0];
    if (!item) return;
    var control = item.querySelector('[data-key="' + key + '"]');
    if (control) control.click();
  }

  document.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && typing(event.target)) {
      var form = event.target.form || (event.target.closest && event.target.closest("form"));
      if (form) {
        event.preventDefault();
        form.requestSubmit ? form.requestSubmit() : form.submit();
      }
      return;
    }
    if (typing(event.target) || event.ctrlKey || event.metaKey || event.altKey) return;
    if (!document.querySelector(".queue-item") && event.key !== "?") return;
    var dialog = document.getElementById("shortcuts");
    switch (event.key) {
      case "j": move(1); break;
      case "k": move(-1); break;
      case "a": case "c": case "e": case "r": case "m": case "o": case "x": act(event.key); break;
      case "?":
        if (!dialog) return;
        if (dialog.open) dialog.close(); else dialog.showModal();
        break;
      default: return;
    }
    event.preventDefault();
  });

  document.addEventListener("htmx:afterSwap", function (event) {
    var announce = document.getElementById("announce");
    var target = event.detail && event.detail.elt;
    if (announce) {
      var done = document.querySelector(".queue-item.done:not([data-announced])");
      if (done) {
        done.setAttribute("data-announced", "1");
        announce.textContent = done.textContent.trim();
      } else {
        var results = document.getElementById("results");
        announce.textContent = results ? (results.querySelector("h2, .count") || results).textContent.trim().slice(0, 200) : "";
      }
    }
    // After an item is acted on, its section's count and the queue's total go down by one,
    // and focus moves on to the next open item.
    if (target && target.classList && target.classList.contains("done")) {
      var section = target.closest(".queue-section");
      [section && section.querySelector(".queue-count"), document.getElementById("queue-total")]
        .forEach(function (count) {
          if (!count) return;
          var left = Math.max(Number(count.getAttribute("data-count")) - 1, 0);
          count.setAttribute("data-count", String(left));
          count.textContent = "(" + left + ")";
        });
      var left = open();
      var after = left.filter(function (item) {
        return target.compareDocumentPosition(item) & Node.DOCUMENT_POSITION_FOLLOWING;
      });
      var next = after[0] || left[left.length - 1];
      if (next) next.focus();
    }
  });
})();
