;;; lsp-coder-ghost-ask.el --- ask lsp-coder for the ghost text -*- lexical-binding: t -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1"))
;; Keywords: languages, tools, completion

;;; Commentary:

;; The asking half of lsp-coder-ghost.el: textDocument/inlineCompletion at point through the
;; buffer's connection (`lsp-coder-ghost-backend', set by lsp-coder.el for eglot and by
;; lsp-coder-lsp-mode.el), after each edit (`lsp-coder-ghost-delay') or when the user asks.
;; An answer that still fits point and the text goes to `lsp-coder-ghost-show'; a newer
;; request or `lsp-coder-ghost-cancel' drops the older answers.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'subr-x)

(declare-function lsp-coder-ghost-show "lsp-coder-ghost")

(defgroup lsp-coder-ghost nil
  "lsp-coder's suggestions as ghost text."
  :group 'lsp-coder
  :prefix "lsp-coder-ghost-")

(defcustom lsp-coder-ghost-delay 0.1
  "Seconds after an edit before asking lsp-coder for a suggestion."
  :type 'number)

(defvar-local lsp-coder-ghost-backend nil
  "How this buffer talks to lsp-coder: a plist set by lsp-coder.el or
lsp-coder-lsp-mode.el.  :request (lambda (INVOKED CALLBACK)) sends
textDocument/inlineCompletion at point and calls CALLBACK with the result;
:execute (lambda (COMMAND)) runs an LSP command; :to-point (lambda
(POSITION)) is the buffer position of an LSP position.")

(defvar-local lsp-coder-ghost--generation 0
  "Bumped by each request and dismissal: an answer to an older request is dropped.")
(defvar lsp-coder-ghost--timer nil)
(defun lsp-coder-ghost--field (object key)
  "KEY (a keyword) of OBJECT, a JSON object.
A plist (eglot) or a hash table (lsp-mode)."
  (if (hash-table-p object)
      (gethash (substring (symbol-name key) 1) object)
    (plist-get object key)))

(defun lsp-coder-ghost--items (result position)
  "The texts of RESULT's items, each cut to start at POSITION (an item whose range starts
before it must match the text there), with their commands: a list of (TEXT . COMMAND)."
  (let ((items (if (vectorp result) result (lsp-coder-ghost--field result :items)))
        (to-point (plist-get lsp-coder-ghost-backend :to-point))
        found)
    (seq-doseq (item items)
      (let* ((text (lsp-coder-ghost--field item :insertText))
             (text (if (stringp text) text (lsp-coder-ghost--field text :value)))
             (range (lsp-coder-ghost--field item :range))
             (start (if range
                        (funcall to-point (lsp-coder-ghost--field range :start))
                      position)))
        (when (and (stringp text) (<= start position)
                   (string-prefix-p (buffer-substring-no-properties start position) text))
          (let ((rest (substring text (- position start))))
            (unless (or (string-empty-p rest) (assoc rest found))
              (push (cons rest (lsp-coder-ghost--field item :command)) found))))))
    (nreverse found)))

(defun lsp-coder-ghost-request (&optional invoked arrange)
  "Ask lsp-coder for a suggestion at point.
INVOKED: the user asked (the server answers at once, with alternatives).  ARRANGE, a
function of the items (a list of (TEXT . COMMAND)) returning (ITEMS . INDEX), orders them."
  (when-let ((request (plist-get lsp-coder-ghost-backend :request)))
    (let ((generation (cl-incf lsp-coder-ghost--generation))
          (buffer (current-buffer))
          (position (point))
          (tick (buffer-chars-modified-tick)))
      (funcall
       request invoked
       (lambda (result)
         (when (and result (buffer-live-p buffer))
           (with-current-buffer buffer
             (when (and (= generation lsp-coder-ghost--generation)
                        (= position (point))
                        (= tick (buffer-chars-modified-tick))
                        (eq buffer (window-buffer (selected-window))))
               (when-let ((items (lsp-coder-ghost--items result position)))
                 (pcase-let ((`(,items . ,index) (if arrange (funcall arrange items)
                                                   (cons items 0))))
                   (lsp-coder-ghost-show items index position)))))))))))

(defun lsp-coder-ghost--schedule ()
  "Ask `lsp-coder-ghost-delay' seconds from now, unless another edit comes first."
  (when lsp-coder-ghost--timer
    (cancel-timer lsp-coder-ghost--timer))
  (let ((buffer (current-buffer)))
    (setq lsp-coder-ghost--timer
          (run-with-timer lsp-coder-ghost-delay nil
                          (lambda ()
                            (setq lsp-coder-ghost--timer nil)
                            (when (and (buffer-live-p buffer)
                                       (eq buffer (window-buffer (selected-window))))
                              (with-current-buffer buffer
                                (lsp-coder-ghost-request))))))))

(defun lsp-coder-ghost-cancel ()
  "Drop the answers on their way and the request waiting for its delay."
  (cl-incf lsp-coder-ghost--generation)
  (when lsp-coder-ghost--timer
    (cancel-timer lsp-coder-ghost--timer)
    (setq lsp-coder-ghost--timer nil)))

(provide 'lsp-coder-ghost-ask)
;;; lsp-coder-ghost-ask.el ends here
