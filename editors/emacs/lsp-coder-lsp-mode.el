;;; lsp-coder-lsp-mode.el --- lsp-coder as an lsp-mode add-on client -*- lexical-binding: t -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (lsp-mode "8.0"))
;; Keywords: languages, tools, completion

;;; Commentary:

;; Registers lsp-coder with lsp-mode as an add-on client (`:add-on? t'): lsp-mode starts it
;; next to the language server it picks for the buffer (pyright, rust-analyzer, gopls,
;; ...), and `completion-at-point' (company, corfu) shows the items of both.
;;
;;   (add-to-list 'load-path "/path/to/lsp-coder/editors/emacs")
;;   (require 'lsp-coder-lsp-mode)
;;
;; The settings are lsp-coder.el's: `lsp-coder-command', `lsp-coder-initialization-options'
;; and `lsp-coder-modes' (the modes where lsp-mode adds it).

;;; Code:

(require 'lsp-mode)
(require 'lsp-coder)

(lsp-register-client
 (make-lsp-client
  :new-connection (lsp-stdio-connection (lambda () lsp-coder-command))
  :activation-fn (lambda (_file-name major-mode) (memq major-mode lsp-coder-modes))
  :server-id 'lsp-coder
  :add-on? t
  :priority -1
  :initialization-options (lambda () lsp-coder-initialization-options)))

(provide 'lsp-coder-lsp-mode)
;;; lsp-coder-lsp-mode.el ends here
