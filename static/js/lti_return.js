// Deep linking: send the signed links back to the LMS without a click (the
// button stays for browsers without JavaScript).
document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("lti-deep-link-return");
  if (form) form.submit();
});
