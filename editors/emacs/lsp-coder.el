;;; lsp-coder.el --- Local AI code completion with lsp-coder and eglot -*- lexical-binding: t -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (jsonrpc "1.0"))
;; Keywords: languages, tools, completion

;;; Commentary:

;; Registers lsp-coder, a language server that completes code with a local llama.cpp
;; model, with eglot.  Load this file, open a file of one of `lsp-coder-modes' and run
;; M-x eglot.  Suggestions show as ghost text while you type (`lsp-coder-ghost-mode', see
;; lsp-coder-ghost.el: TAB accepts while one shows); with `lsp-coder-ghost-text' nil they
;; come through `completion-at-point' instead (company, corfu, the *Completions* buffer).
;;
;; NOTE: eglot runs one language server per major mode.  The entry added for
;; `lsp-coder-modes' makes lsp-coder that server.  To keep your own server (pylsp,
;; rust-analyzer, ...) and add lsp-coder beside it, run both through the LSP multiplexer
;; rassumfrassum (`pip install rassumfrassum'):
;;
;;   (lsp-coder-eglot-beside '(python-mode python-ts-mode) '("pylsp"))
;;
;; rass then loads lsp-coder-rass.py (next to this file), which sends
;; textDocument/inlineCompletion to lsp-coder (rass alone sends it to the first server).
;;
;; lsp-mode runs several servers per buffer by itself: see lsp-coder-lsp-mode.el.
;;
;; Settings go to the server as "initializationOptions": the same tree as lsp-coder's
;; config.toml, written as a plist with snake_case keys, for example
;;
;;   (setq lsp-coder-initialization-options
;;         '(:model (:path "/abs/path/model.gguf" :draft_path "none")
;;           :completion (:debounce_ms 0 :max_lines 4)))

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(declare-function eglot-current-server "eglot")
(declare-function eglot-managed-p "eglot")
(declare-function eglot--signal-textDocument/didChange "eglot")
(declare-function eglot--TextDocumentPositionParams "eglot")
(declare-function eglot--lsp-position-to-point "eglot")
(declare-function object-of-class-p "eieio")
(defvar eglot-server-programs)

(defconst lsp-coder--directory
  (file-name-directory (or load-file-name buffer-file-name
                           (bound-and-true-p byte-compile-current-file)))
  "The folder of lsp-coder.el (and of lsp-coder-rass.py).")

(require 'lsp-coder-ghost
         (expand-file-name "lsp-coder-ghost"
                           (file-name-directory
                            (or load-file-name buffer-file-name
                                (bound-and-true-p byte-compile-current-file)))))

(defgroup lsp-coder nil
  "Local AI code completion with lsp-coder."
  :group 'eglot
  :prefix "lsp-coder-")

(defcustom lsp-coder-command '("lsp-coder")
  "The lsp-coder server program and its arguments."
  :type '(repeat string))

(defcustom lsp-coder-initialization-options '(:completion (:debounce_ms 0))
  "Settings sent as initializationOptions: lsp-coder's config tree as a plist.
Keys are the snake_case names of config.toml.  nil sends an empty object,
so the server uses its config file, else its defaults."
  :type 'sexp)

(defcustom lsp-coder-modes
  '(python-mode python-ts-mode
    rust-mode rust-ts-mode
    js-mode js-ts-mode typescript-mode typescript-ts-mode
    go-mode go-ts-mode
    c-mode c-ts-mode c++-mode c++-ts-mode)
  "Major modes whose buffers eglot connects to lsp-coder alone.
Set this before loading lsp-coder.el; nil when every mode uses
`lsp-coder-eglot-beside'."
  :type '(repeat symbol))

(defcustom lsp-coder-rass-program "rass"
  "The program of the LSP multiplexer rassumfrassum (pip install rassumfrassum)."
  :type 'string)

(defcustom lsp-coder-rass-preset (expand-file-name "lsp-coder-rass.py" lsp-coder--directory)
  "The rass preset that sends textDocument/inlineCompletion to lsp-coder.
nil for none."
  :type '(choice file (const nil)))

(defun lsp-coder-eglot-contact (&rest _)
  "The eglot contact for lsp-coder, read from the current settings."
  (append (list 'lsp-coder-eglot-server)
          lsp-coder-command
          (list :initializationOptions
                (or lsp-coder-initialization-options (make-hash-table)))))

(defun lsp-coder-rass-contact (server)
  "The eglot contact that runs SERVER and lsp-coder together through rassumfrassum.
SERVER is a command list such as (\"pylsp\").  The server comes first, so the
requests only one server answers (hover, definition, rename) go to it; completions
come from both.  lsp-coder's settings travel under the `rass' key of the
initializationOptions, which rass gives to lsp-coder alone."
  (let ((name (file-name-nondirectory (car lsp-coder-command))))
    (append (list 'lsp-coder-eglot-server lsp-coder-rass-program)
            (and lsp-coder-rass-preset (list lsp-coder-rass-preset))
            (list "--") server (list "--") lsp-coder-command
            (list :initializationOptions
                  (list :rass (list (intern (concat ":" (regexp-quote name)))
                                    (or lsp-coder-initialization-options
                                        (make-hash-table))))))))

(defun lsp-coder-eglot-beside (modes server)
  "Make eglot run SERVER and lsp-coder side by side in MODES.
MODES is a major mode or a list of them; SERVER the command list of the language
server you use there, for example (\"pylsp\") or (\"rust-analyzer\").  The entry
goes first in `eglot-server-programs', and reads the settings each time eglot
connects."
  (with-eval-after-load 'eglot
    (add-to-list 'eglot-server-programs
                 (cons modes (lambda (&rest _)
                               (lsp-coder-rass-contact server))))))

(with-eval-after-load 'eglot
  (when lsp-coder-modes
    (add-to-list 'eglot-server-programs (cons lsp-coder-modes #'lsp-coder-eglot-contact)))

  (defclass lsp-coder-eglot-server (eglot-lsp-server)
    ((ghost-text :initform nil :accessor lsp-coder--ghost-text
                 :documentation "Whether the connection told lsp-coder it shows ghost text."))
    :documentation "An eglot connection to lsp-coder, alone or beside another server (rass).")

  (cl-defmethod eglot-client-capabilities :around ((server lsp-coder-eglot-server))
    "eglot's capabilities, and lspCoderGhostText when the suggestions show as ghost text:
the server then leaves them out of completion lists."
    (let ((capabilities (cl-call-next-method)))
      (setf (lsp-coder--ghost-text server) lsp-coder-ghost-text)
      (if lsp-coder-ghost-text
          (plist-put capabilities :experimental '(:lspCoderGhostText t))
        capabilities)))

  (add-hook 'eglot-managed-mode-hook #'lsp-coder--eglot-ghost))

(defun lsp-coder--eglot-request (invoked callback)
  "Send textDocument/inlineCompletion at point to the buffer's server; CALLBACK gets the
result.  INVOKED: the user asked."
  (when-let ((server (eglot-current-server)))
    (eglot--signal-textDocument/didChange)
    (jsonrpc-async-request
     server :textDocument/inlineCompletion
     (append (eglot--TextDocumentPositionParams)
             (list :context (list :triggerKind (if invoked 1 2))))
     :success-fn callback :error-fn #'ignore :timeout-fn #'ignore :timeout 60)))

(defun lsp-coder--eglot-execute (command)
  "Run the LSP COMMAND (a plist) on the buffer's server."
  (when-let ((server (eglot-current-server)))
    (jsonrpc-async-request
     server :workspace/executeCommand
     (list :command (plist-get command :command)
           :arguments (or (plist-get command :arguments) []))
     :success-fn #'ignore :error-fn #'ignore :timeout-fn #'ignore)))

(defun lsp-coder--eglot-ghost ()
  "Turn `lsp-coder-ghost-mode' on in a buffer eglot manages with lsp-coder's ghost text
(the connection's choice, from `lsp-coder-ghost-text'); off when eglot leaves it."
  (let ((server (and (eglot-managed-p) (eglot-current-server))))
    (if (and server (object-of-class-p server 'lsp-coder-eglot-server)
             (lsp-coder--ghost-text server))
        (progn
          (setq lsp-coder-ghost-backend
                (list :request #'lsp-coder--eglot-request
                      :execute #'lsp-coder--eglot-execute
                      :to-point #'eglot--lsp-position-to-point))
          (lsp-coder-ghost-mode 1))
      (when lsp-coder-ghost-mode
        (lsp-coder-ghost-mode -1)))))

(defun lsp-coder-show-stats ()
  "Show the lsp-coder server's counters (the lspCoder.stats command)."
  (interactive)
  (let* ((server (or (eglot-current-server) (user-error "No eglot server in this buffer")))
         (stats (jsonrpc-request server :workspace/executeCommand
                                 '(:command "lspCoder.stats" :arguments []))))
    (with-current-buffer (get-buffer-create "*lsp-coder stats*")
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (json-encode (plist-get stats :totals)))
        (json-pretty-print-buffer))
      (special-mode)
      (display-buffer (current-buffer)))))

(provide 'lsp-coder)
;;; lsp-coder.el ends here
