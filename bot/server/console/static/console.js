// The console's only script (progressive: every page works without it).
// - a form marked data-confirm asks before it is sent (redeliver);
// - on a page listing YAML errors, focus moves to the list so keyboards and screen readers start there;
// - times are shown in the browser's own time zone as well as UTC.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("form[data-confirm]").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      if (!window.confirm(form.getAttribute("data-confirm"))) { event.preventDefault(); }
    });
  });
  var errors = document.querySelector("ol.errors");
  if (errors) { errors.setAttribute("tabindex", "-1"); errors.focus(); }
  document.querySelectorAll("time[datetime]").forEach(function (el) {
    var seconds = Number(el.getAttribute("datetime"));
    if (!isNaN(seconds) && seconds > 0) { el.title = new Date(seconds * 1000).toLocaleString(); }
  });
  document.documentElement.setAttribute("data-js", "ready");
});
