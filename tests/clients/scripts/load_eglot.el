;;; load_eglot.el --- load eglot for the lsp-coder client tests -*- lexical-binding: t -*-

;; Loaded by eglot_completion.el; also run alone (emacs --batch -l load_eglot.el), where it
;; exits with an error when this Emacs has no eglot.

;;; Code:

(require 'package)
(package-initialize)
(unless (require 'eglot nil t)
  ;; Debian's elpa-eglot, when package.el did not activate it.
  (dolist (dir (file-expand-wildcards "/usr/share/emacs/site-lisp/elpa/eglot-*"))
    (add-to-list 'load-path dir))
  (require 'eglot))

;;; load_eglot.el ends here
