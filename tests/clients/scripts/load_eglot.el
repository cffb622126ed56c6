;;; load_eglot.el --- load eglot for the lsp-coder client tests -*- lexical-binding: t -*-

;; Loaded by eglot_completion.el and eglot_ghost.el (which load test_io.el after it, for
;; `lsp-coder-test--messages'); also run alone (emacs --batch -l load_eglot.el), where it
;; exits with an error when this Emacs has no eglot.

;;; Code:

(require 'package)
(package-initialize)
(unless (require 'eglot nil t)
  ;; Debian's elpa-eglot, when package.el did not activate it.
  (dolist (dir (file-expand-wildcards "/usr/share/emacs/site-lisp/elpa/eglot-*"))
    (add-to-list 'load-path dir))
  (require 'eglot))

(defvar lsp-coder-test--messages)

(defun lsp-coder-test--note (_server method &rest params)
  "Record the message of a window/logMessage or window/showMessage METHOD with PARAMS."
  (when (memq method '(window/logMessage window/showMessage))
    (push (plist-get params :message) lsp-coder-test--messages)))

(advice-add 'eglot-handle-notification :before #'lsp-coder-test--note)

;;; load_eglot.el ends here
